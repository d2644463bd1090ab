import { createHash } from 'node:crypto';

/**
 * Deterministic bench data: identity i, session j and the raw token of session j are pure
 * functions of their index, so a seeded database needs no side file of tokens and a resumed
 * seed continues exactly where it stopped. Rows have the shapes the service itself writes
 * (UUIDv7 ids, `tess_s_` + 43 base64url characters, SHA-256 base64url token hashes).
 */

/** The bench's own pepper; never a real deployment's. */
export const BENCH_PEPPER = 'bench-pepper-not-a-secret';
export const BENCH_PASSWORD = 'bench-password-0001';

const IDENTITY_EPOCH = Date.UTC(2025, 0, 1);
const SESSION_EPOCH = Date.UTC(2025, 6, 1);

/** A UUIDv7 whose 48-bit timestamp and 62 random bits are derived from `n`. */
function uuidV7(epochMs: number, n: number, salt: number): string {
  const ts = (epochMs + Math.floor(n / 4096)).toString(16).padStart(12, '0');
  const randA = (n % 4096).toString(16).padStart(3, '0');
  const randB = (0x8000 | (salt & 0x3fff)).toString(16);
  const tail = n.toString(16).padStart(12, '0');
  return `${ts.slice(0, 8)}-${ts.slice(8, 12)}-7${randA}-${randB}-${tail}`;
}

export function identityId(i: number): string {
  return uuidV7(IDENTITY_EPOCH, i, 0x1d);
}

export function sessionId(j: number): string {
  return uuidV7(SESSION_EPOCH, j, 0x5e);
}

export function username(i: number): string {
  return `bench${i}`;
}

/** The raw session token of session j: only the bench knows it, the database holds its hash. */
export function sessionToken(j: number): string {
  return `tess_s_${createHash('sha256').update(`tessera-bench-session:${j}`).digest('base64url')}`;
}

/** Same digest as src/lib/tokens.ts hashToken. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

export interface SeedShape {
  identities: number;
  sessions: number;
}

export interface IdentityRow {
  id: string;
  username: string;
  display_name: string;
  avatar_url: string | null;
  state: string;
  password_hash: string;
  created_at: number;
  updated_at: number;
}

export interface SessionRow {
  id: string;
  token_hash: string;
  identity_id: string;
  authenticated_via: string;
  issued_at: number;
  expires_at: number;
  revoked_at: number | null;
}

export function identityRow(i: number, passwordHash: string): IdentityRow {
  const at = IDENTITY_EPOCH + i;
  return {
    id: identityId(i),
    username: username(i),
    display_name: `Bench User ${i}`,
    avatar_url: null,
    state: 'active',
    password_hash: passwordHash,
    created_at: at,
    updated_at: at,
  };
}

/** Session j belongs to identity j mod identities; it stays valid for `validUntil`. */
export function sessionRow(j: number, shape: SeedShape, issuedAt: number, validUntil: number) {
  const row: SessionRow = {
    id: sessionId(j),
    token_hash: tokenHash(sessionToken(j)),
    identity_id: identityId(j % shape.identities),
    authenticated_via: 'password',
    issued_at: issuedAt,
    expires_at: validUntil,
    revoked_at: null,
  };
  return row;
}

export const IDENTITY_COLUMNS = [
  'id',
  'username',
  'display_name',
  'avatar_url',
  'state',
  'password_hash',
  'created_at',
  'updated_at',
] as const;

export const SESSION_COLUMNS = [
  'id',
  'token_hash',
  'identity_id',
  'authenticated_via',
  'issued_at',
  'expires_at',
  'revoked_at',
] as const;

/** `count` distinct indices in [0, total), chosen with a seeded generator (same every run). */
export function sampleIndices(total: number, count: number, seed = 42): number[] {
  if (count >= total) return Array.from({ length: total }, (_, i) => i);
  let state = seed >>> 0;
  const next = () => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const chosen = new Set<number>();
  while (chosen.size < count) chosen.add(Math.floor(next() * total));
  return [...chosen];
}
