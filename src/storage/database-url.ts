/**
 * The forms a database URL takes (SERVICE_DATABASE_URL). Kept apart from open.ts, with no
 * imports, so that the configuration can check a URL without loading either driver.
 */

/** What the configuration error says is accepted. */
export const DATABASE_URL_FORMS = 'postgres://…, postgresql://…, sqlite:<path> or a file path';

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

/** The SQLite file a non-PostgreSQL URL names: the path, without the optional `sqlite:`. */
export function sqliteFilename(url: string): string {
  return url.replace(/^sqlite:(\/\/)?/, '');
}

/**
 * The scheme of a URL that is neither PostgreSQL nor SQLite (`mysql`, `postgress`), which
 * would otherwise be taken for a file name; null for the accepted forms. A scheme is two
 * characters or more, so that `C:` and `:memory:` stay paths.
 */
export function unknownScheme(url: string): string | null {
  if (isPostgresUrl(url)) return null;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]+):/.exec(url)?.[1];
  return scheme === undefined || scheme === 'sqlite' ? null : scheme;
}
