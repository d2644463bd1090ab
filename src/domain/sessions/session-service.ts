import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { TOKEN_FORMAT, hashToken, isWellFormedToken, newToken } from '../../lib/tokens.js';
import type { Actor, AuditLog } from '../audit/audit-log.js';
import { DomainError, notFound } from '../errors.js';
import { type IdentityRecord, requireIdentityId } from '../identities/identity.js';
import type { Assurance } from '../sign-in/method.js';
import type { Store } from '../store.js';
import type { LegacyTokens } from '../tokens/legacy-tokens.js';
import {
  authenticateServiceToken,
  callerOfRecord,
} from '../service-tokens/service-token-service.js';
import type { ServiceCaller } from '../service-tokens/service-token.js';
import type { LastUseRecorder } from './last-use.js';
import type { SessionWithIdentity } from './session-store.js';
import {
  type AuthenticationMethod,
  type MintedSession,
  type Session,
  type SessionDevice,
  type SessionRecord,
  toSession,
} from './session.js';

export interface SessionDeps {
  store: Store;
  clock: Clock;
  audit: AuditLog;
  sessionTtlMs: number;
  /** The offline token check (checksum, or pre-checksum tokens while any remain). */
  legacyTokens: Pick<LegacyTokens, 'accepts'>;
  lastUse: LastUseRecorder;
}

/**
 * Inserts a new session through `tx`; the raw token leaves only in the return value.
 * Sign-ins go through `completeSignIn` (sign-in/complete-sign-in.ts), never here directly.
 */
export async function mintSession(
  deps: Pick<SessionDeps, 'clock' | 'sessionTtlMs'>,
  tx: Pick<Store, 'insertSession'>,
  identity: IdentityRecord,
  by: { id: AuthenticationMethod; assurance: Assurance },
  device: SessionDevice,
): Promise<MintedSession> {
  const now = deps.clock.now();
  const token = newToken('session');
  const record: SessionRecord = {
    id: newId(),
    token_hash: hashToken(token),
    identity_id: identity.id,
    authenticated_via: by.id,
    aal: by.assurance,
    issued_at: now,
    expires_at: now + deps.sessionTtlMs,
    revoked_at: null,
    // The sign-in is the session's first use.
    last_used_at: now,
  };
  await tx.insertSession({ ...record, ...device, token_format: TOKEN_FORMAT });
  return { session: toSession(record, identity), token };
}

/**
 * The check behind whoami and /v1/sessions/verify: format and checksum first (garbage and
 * typos never reach storage), then one lookup, then revoked -> expired -> disabled. No
 * caching, so a revocation or a disable takes effect on the very next request. A valid
 * session's use is recorded in the background, at most once per LAST_USE_GRANULARITY_MS
 * (last-use.ts).
 */
export async function verifySession(
  deps: Pick<SessionDeps, 'store' | 'clock' | 'lastUse' | 'legacyTokens'>,
  token: unknown,
  /** The session row already read with the caller's token (`readCallerWithSession`). */
  read?: SessionRead,
): Promise<Session> {
  let found: SessionWithIdentity | undefined;
  if (read !== undefined && read.token === token) {
    found = read.found;
  } else {
    if (!deps.legacyTokens.accepts('session', token)) throw new DomainError('invalid_token');
    found = await deps.store.findSessionByTokenHash(hashToken(token));
  }
  if (!found || found.session.revoked_at !== null) throw new DomainError('invalid_token');
  const now = deps.clock.now();
  if (found.session.expires_at <= now) throw new DomainError('session_expired');
  if (found.identity.state !== 'active') throw new DomainError('identity_disabled');
  deps.lastUse.record(found.session, now);
  return toSession(found.session, found.identity);
}

/** A session check's row, read before `verifySession` asks for it, by `token`. */
export interface SessionRead {
  /** Passed the offline check (format and checksum) before it was read. */
  token: string;
  found: SessionWithIdentity | undefined;
}

/**
 * A service asking about a session (`POST /v1/sessions/verify`): its bearer token and the
 * session token it names, read together (one round trip on PostgreSQL where the two reads
 * were two). The caller is refused as `authenticateServiceToken` refuses it; the session
 * row is for `verifySession`. A session token that cannot be one (not a string, a wrong
 * checksum) is not read: the caller alone is.
 */
export async function readCallerWithSession(
  deps: Pick<SessionDeps, 'store' | 'legacyTokens'>,
  serviceToken: string,
  sessionToken: unknown,
): Promise<{ caller: ServiceCaller; read?: SessionRead }> {
  if (
    !deps.legacyTokens.accepts('service', serviceToken) ||
    !deps.legacyTokens.accepts('session', sessionToken)
  ) {
    return { caller: await authenticateServiceToken(deps, serviceToken) };
  }
  const both = await deps.store.findCallerAndSession(
    hashToken(serviceToken),
    hashToken(sessionToken),
  );
  return {
    caller: callerOfRecord(both.serviceToken),
    read: { token: sessionToken, found: both.found },
  };
}

/**
 * Idempotent: an unknown, expired or already revoked well-formed token is not an error.
 * One whose checksum rules it out (docs/tokens.md) names no session: it is audited like an
 * unknown token, without a lookup.
 */
export async function revokeSessionByToken(
  deps: SessionDeps,
  actor: Actor,
  token: string,
): Promise<void> {
  if (!isWellFormedToken('session', token)) throw new DomainError('invalid_token');
  if (!deps.legacyTokens.accepts('session', token)) {
    await deps.store.transaction((tx) =>
      deps.audit.write(tx, actor, {
        action: 'session_revoke',
        target_identity: null,
        details: { session_id: null },
      }),
    );
    return;
  }
  const tokenHash = hashToken(token);
  await deps.store.transaction(async (tx) => {
    const found = await tx.findSessionByTokenHash(tokenHash);
    await tx.revokeSessionByTokenHash(tokenHash, deps.clock.now());
    await deps.audit.write(tx, actor, {
      action: 'session_revoke',
      target_identity: found?.identity.id ?? null,
      details: { session_id: found?.session.id ?? null },
    });
  });
}

export async function revokeSessionById(
  deps: SessionDeps,
  actor: Actor,
  sessionId: string,
): Promise<void> {
  await deps.store.transaction(async (tx) => {
    const session = await tx.findSessionById(sessionId);
    if (!session) throw notFound();
    await tx.revokeSessionById(sessionId, deps.clock.now());
    await deps.audit.write(tx, actor, {
      action: 'session_revoke',
      target_identity: session.identity_id,
      details: { session_id: sessionId },
    });
  });
}

export async function revokeIdentitySessions(
  deps: SessionDeps,
  actor: Actor,
  identityId: string,
): Promise<number> {
  requireIdentityId(identityId);
  return deps.store.transaction(async (tx) => {
    if (!(await tx.findIdentityById(identityId))) throw notFound();
    const revoked = await tx.revokeIdentitySessions(identityId, deps.clock.now());
    await deps.audit.write(tx, actor, {
      action: 'identity_revoke_sessions',
      target_identity: identityId,
      details: { revoked },
    });
    return revoked;
  });
}
