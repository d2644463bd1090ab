import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { TOKEN_FORMAT, hashToken, newToken } from '../../lib/tokens.js';
import type { Actor, AuditLog } from '../audit/audit-log.js';
import { DomainError, notFound, validationError } from '../errors.js';
import type { Store } from '../store.js';
import type { LegacyTokens } from '../tokens/legacy-tokens.js';
import { UniqueViolation } from '../unique-violation.js';
import {
  GRANTS,
  type ServiceCaller,
  type ServiceTokenRecord,
  type ServiceTokenView,
  isGrant,
  toCaller,
  toServiceTokenView,
} from './service-token.js';

export interface ServiceTokenDeps {
  store: Store;
  clock: Clock;
  audit: AuditLog;
}

/**
 * Bearer authentication: format and checksum (docs/tokens.md), then hash lookup; revoked
 * and unknown look the same.
 */
export async function authenticateServiceToken(
  deps: {
    store: Pick<Store, 'findServiceTokenByHash'>;
    legacyTokens: Pick<LegacyTokens, 'accepts'>;
  },
  token: string,
): Promise<ServiceCaller> {
  if (!deps.legacyTokens.accepts('service', token)) throw new DomainError('invalid_service_token');
  return callerOfRecord(await deps.store.findServiceTokenByHash(hashToken(token)));
}

/** The caller a token's stored row names; an unknown or revoked token is refused. */
export function callerOfRecord(record: ServiceTokenRecord | undefined): ServiceCaller {
  if (!record || record.revoked_at !== null) throw new DomainError('invalid_service_token');
  return toCaller(record);
}

export async function createServiceToken(
  deps: ServiceTokenDeps,
  actor: Actor,
  input: { name: string; grants: string[] },
): Promise<{ token: string; service: ServiceTokenView }> {
  const name = input.name.trim();
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) {
    throw validationError('name must be 1-64 characters of letters, digits, ".", "_", "-"');
  }
  const unknown = input.grants.filter((grant) => !isGrant(grant));
  if (unknown.length > 0 || input.grants.length === 0) {
    throw validationError(`grants must be one or more of: ${GRANTS.join(', ')}`);
  }
  const token = newToken('service');
  const record = {
    id: newId(),
    name,
    token_hash: hashToken(token),
    grants: [...new Set(input.grants)].join(' '),
    created_at: deps.clock.now(),
    revoked_at: null,
    token_format: TOKEN_FORMAT,
  };
  await deps.store.transaction(async (tx) => {
    try {
      await tx.insertServiceToken(record);
    } catch (error) {
      if (error instanceof UniqueViolation)
        throw validationError(`a service named "${name}" exists`);
      throw error;
    }
    await deps.audit.write(tx, actor, {
      action: 'svc_create',
      details: { service_id: record.id, name, grants: record.grants.split(' ') },
    });
  });
  return { token, service: toServiceTokenView(record) };
}

export async function revokeServiceToken(
  deps: ServiceTokenDeps,
  actor: Actor,
  idOrName: string,
): Promise<ServiceTokenView> {
  return deps.store.transaction(async (tx) => {
    const record = await tx.findServiceTokenByIdOrName(idOrName);
    if (!record) throw notFound();
    const now = deps.clock.now();
    await tx.revokeServiceToken(record.id, now);
    await deps.audit.write(tx, actor, {
      action: 'svc_revoke',
      details: { service_id: record.id, name: record.name },
    });
    return toServiceTokenView({ ...record, revoked_at: record.revoked_at ?? now });
  });
}

export async function listServiceTokens(store: Store): Promise<ServiceTokenView[]> {
  return (await store.listServiceTokens()).map(toServiceTokenView);
}
