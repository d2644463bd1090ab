import { toIso } from '../../lib/clock.js';
import { validationError } from '../errors.js';
import type { Actor, AuditLog } from '../audit/audit-log.js';
import type { Identity, IdentityRecord, IdentityState } from '../identities/identity.js';
import type { ImportLine } from './transfer-line.js';
import { parseIdentityListQuery } from '../identities/list-identities.js';
import type { LinkRecord } from '../links/link.js';
import type { HashTransfer } from '../passwords/hash-transfer.js';
import type { Store } from '../store.js';

/** One line of an export: the import format, plus the id and creation time it keeps. */
export interface ExportLine extends Omit<Identity, 'updated_at'> {
  links: ImportLine['links'];
  password_hash?: string;
  password_hash_peppered?: true;
}

export interface ExportOptions {
  includePasswordHashes: boolean;
  /** The operator accepts that TOTP, recovery codes and passkeys are left behind. */
  withoutCredentials: boolean;
  state?: IdentityState;
}

const PAGE = 500;

export function parseExportOptions(input: {
  includePasswordHashes?: boolean;
  withoutCredentials?: boolean;
  state?: string;
}): ExportOptions {
  const { state } = parseIdentityListQuery({ state: input.state });
  return {
    includePasswordHashes: input.includePasswordHashes ?? false,
    withoutCredentials: input.withoutCredentials ?? false,
    state,
  };
}

/**
 * The export format has no place for second factors or passkeys: imported elsewhere, a
 * user who had two-factor would sign in with a password alone. So an export of identities
 * holding any is refused, naming them, unless the operator says the loss is intended.
 */
export async function assertExportable(
  deps: { store: Store },
  options: ExportOptions,
): Promise<void> {
  if (options.withoutCredentials) return;
  const held = await deps.store.credentialHolders({ state: options.state });
  const kinds: Array<[number, string]> = [
    [held.totp, 'TOTP'],
    [held.recovery_codes, 'recovery codes'],
    [held.passkeys, 'passkeys'],
  ];
  // "3 identities have TOTP, 1 has passkeys": the noun once, on the first count.
  const parts = kinds
    .filter(([count]) => count > 0)
    .map(([count, kind], index) => {
      const noun = index === 0 ? (count === 1 ? ' identity' : ' identities') : '';
      return `${count}${noun} ${count === 1 ? 'has' : 'have'} ${kind}`;
    });
  if (parts.length === 0) return;
  throw validationError(
    `${parts.join(', ')}: an export cannot carry them; to move a database use \`tessera db copy\`, or pass --without-credentials to export without them`,
  );
}

/**
 * Every identity (of `state`), ordered by id, read a page at a time. Not one snapshot: an
 * identity created or changed while the export runs may show in either form.
 */
export async function* exportIdentities(
  deps: { store: Store; transfer: HashTransfer },
  options: ExportOptions,
): AsyncGenerator<ExportLine> {
  let afterId: string | null = null;
  for (;;) {
    const page = await deps.store.exportPage({ afterId, state: options.state, limit: PAGE });
    if (page.length === 0) return;
    const links = groupByIdentity(await deps.store.linksOf(page.map((record) => record.id)));
    for (const record of page) {
      yield toExportLine(record, links.get(record.id) ?? [], options, deps.transfer);
    }
    afterId = page[page.length - 1]!.id;
  }
}

/**
 * Written before the first line leaves, so an export that stops half-way (or a copy of
 * the hashes) is on record too.
 */
export async function auditExport(
  deps: { store: Store; audit: AuditLog },
  actor: Actor,
  options: ExportOptions,
): Promise<void> {
  await deps.store.transaction((tx) =>
    deps.audit.write(tx, actor, {
      action: 'identity_export',
      details: {
        include_password_hashes: options.includePasswordHashes,
        without_credentials: options.withoutCredentials,
        state: options.state ?? null,
      },
    }),
  );
}

function groupByIdentity(links: LinkRecord[]): Map<string, LinkRecord[]> {
  const groups = new Map<string, LinkRecord[]>();
  for (const link of links) {
    const group = groups.get(link.identity_id);
    if (group) group.push(link);
    else groups.set(link.identity_id, [link]);
  }
  return groups;
}

function toExportLine(
  record: IdentityRecord,
  links: LinkRecord[],
  options: ExportOptions,
  transfer: HashTransfer,
): ExportLine {
  const line: ExportLine = {
    id: record.id,
    username: record.username,
    display_name: record.display_name,
    avatar_url: record.avatar_url,
    email: record.email,
    email_verified: record.email !== null && record.email_verified_at !== null,
    state: record.state,
    created_at: toIso(record.created_at),
    links: links.map((link) => ({
      provider: link.provider,
      subject: link.subject,
      verified: link.verified_at !== null,
    })),
  };
  if (options.includePasswordHashes && record.password_hash !== null) {
    const portable = transfer.portable(record.password_hash);
    line.password_hash = portable.password_hash;
    if (portable.peppered) line.password_hash_peppered = true;
  }
  return line;
}
