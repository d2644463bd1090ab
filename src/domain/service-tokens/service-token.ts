import { toIso } from '../../lib/clock.js';
import type { TokenFormat } from '../../lib/tokens.js';

export const GRANTS = [
  'introspect',
  'identity_read',
  'identity_write',
  'direct_auth',
  'revoke',
  'browser_proxy',
  'external_auth',
  'external_link',
] as const;

export type Grant = (typeof GRANTS)[number];

export function isGrant(value: string): value is Grant {
  return (GRANTS as readonly string[]).includes(value);
}

export interface ServiceTokenRecord {
  id: string;
  name: string;
  token_hash: string;
  grants: string;
  created_at: number;
  revoked_at: number | null;
  /** `legacy`: minted before checksums; operators rotate these (docs/tokens.md). */
  token_format: TokenFormat;
}

/** The authenticated caller of a service endpoint. */
export interface ServiceCaller {
  id: string;
  name: string;
  grants: ReadonlySet<Grant>;
}

/**
 * Grants are immutable after creation, so the set parsed from a grants string is shared by
 * every request that presents a token with that string (a few distinct strings per
 * deployment). Only the parse is kept: the token itself is looked up on every request.
 */
const parsedGrants = new Map<string, ReadonlySet<Grant>>();

export function toCaller(record: ServiceTokenRecord): ServiceCaller {
  let grants = parsedGrants.get(record.grants);
  if (grants === undefined) {
    grants = new Set(record.grants.split(' ').filter(isGrant));
    parsedGrants.set(record.grants, grants);
  }
  return { id: record.id, name: record.name, grants };
}

export interface ServiceTokenView {
  id: string;
  name: string;
  grants: Grant[];
  created_at: string;
  revoked_at: string | null;
  token_format: TokenFormat;
}

export function toServiceTokenView(record: ServiceTokenRecord): ServiceTokenView {
  return {
    id: record.id,
    name: record.name,
    grants: record.grants.split(' ').filter(isGrant),
    created_at: toIso(record.created_at),
    revoked_at: record.revoked_at === null ? null : toIso(record.revoked_at),
    token_format: record.token_format,
  };
}
