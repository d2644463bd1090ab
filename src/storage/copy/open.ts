import { existsSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { isPostgresUrl, openStorage } from '../open.js';
import {
  CopyRefused,
  type TableCopy,
  copyDatabase,
  nonEmptyTables,
  notEmpty,
} from './copy-database.js';
import type { CopyEndpoint } from './endpoint.js';
import { postgresEndpoint } from './postgres-endpoint.js';
import { sqliteEndpoint } from './sqlite-endpoint.js';

export interface CopyRequest {
  /** SERVICE_DATABASE_URL-style URLs: `postgres://…`, or a SQLite file (`sqlite:` optional). */
  sourceUrl: string;
  targetUrl: string;
  timeoutMs: number;
  /** Runs once the target is known empty and both sides are migrated, before the snapshot. */
  beforeCopy?: () => Promise<void>;
}

const sqliteFile = (url: string) => url.replace(/^sqlite:(\/\/)?/, '');

function openEndpoint(url: string, timeoutMs: number): Promise<CopyEndpoint> | CopyEndpoint {
  return isPostgresUrl(url)
    ? postgresEndpoint(url, timeoutMs)
    : sqliteEndpoint(sqliteFile(url), timeoutMs);
}

/** Where a URL's data lives, so that a copy onto itself is refused. */
function location(url: string): string {
  if (isPostgresUrl(url)) {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.href;
  }
  const file = resolve(sqliteFile(url));
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

async function migrate(url: string, timeoutMs: number): Promise<void> {
  const store = openStorage({ databaseUrl: url, timeoutMs, poolSize: 1 });
  try {
    await store.migrate();
  } finally {
    await store.close();
  }
}

/**
 * `tessera db copy`: refuses a non-empty target before touching it, migrates both sides
 * to this version's schema, then copies and verifies (copyDatabase).
 */
export async function copyBetween(request: CopyRequest): Promise<TableCopy[]> {
  const { sourceUrl, targetUrl, timeoutMs } = request;
  if (location(sourceUrl) === location(targetUrl)) {
    throw new CopyRefused('same_database', 'the target is the source database');
  }
  // Opening a SQLite path creates the file: a mistyped source would be copied as empty.
  if (!isPostgresUrl(sourceUrl) && !existsSync(sqliteFile(sourceUrl))) {
    throw new CopyRefused(
      'source_missing',
      `the source database ${sqliteFile(sourceUrl)} does not exist`,
    );
  }
  const target = await openEndpoint(targetUrl, timeoutMs);
  try {
    // Before migrating: a wrong URL pointing at a live database gets no tables added.
    const taken = await nonEmptyTables(target);
    if (taken.length > 0) throw notEmpty(taken);
    await migrate(sourceUrl, timeoutMs);
    await migrate(targetUrl, timeoutMs);
    await request.beforeCopy?.();
    const source = await openEndpoint(sourceUrl, timeoutMs);
    try {
      return await copyDatabase(source, target);
    } finally {
      await source.close();
    }
  } finally {
    await target.close();
  }
}
