import { toIso } from '../../lib/clock.js';
import type { Clock } from '../../lib/clock.js';
import type { Actor, AuditLog } from '../audit/audit-log.js';
import { resolveIdentity } from '../identities/identity-service.js';
import { type Identity, toIdentity } from '../identities/identity.js';
import type { Store } from '../store.js';

export interface OperatorDeps {
  store: Store;
  audit: AuditLog;
  clock: Clock;
}

/** An operator as `tessera admin list` shows them. */
export interface Operator {
  identity: Identity;
  granted_at: string;
}

export interface RoleChange {
  identity: Identity;
  /** False when the identity already had (grant) or lacked (revoke) the role. */
  changed: boolean;
}

/**
 * `tessera admin grant`: the identity may use the admin console (docs/admin.md).
 * Idempotent; audited `operator_grant` either way, with `changed`, in the same transaction.
 */
export function grantOperator(
  deps: OperatorDeps,
  actor: Actor,
  idOrUsername: string,
): Promise<RoleChange> {
  return deps.store.transaction(async (tx) => {
    const target = await resolveIdentity(tx, idOrUsername);
    const changed = await tx.insertOperator({
      identity_id: target.id,
      granted_at: deps.clock.now(),
    });
    await deps.audit.write(tx, actor, {
      action: 'operator_grant',
      target_identity: target.id,
      details: { changed },
    });
    return { identity: toIdentity(target), changed };
  });
}

/**
 * `tessera admin revoke`: takes the role away. The console checks the role on every
 * request, so an open console stops working at its next page or form. Audited
 * `operator_revoke`.
 */
export function revokeOperator(
  deps: OperatorDeps,
  actor: Actor,
  idOrUsername: string,
): Promise<RoleChange> {
  return deps.store.transaction(async (tx) => {
    const target = await resolveIdentity(tx, idOrUsername);
    const changed = await tx.deleteOperator(target.id);
    await deps.audit.write(tx, actor, {
      action: 'operator_revoke',
      target_identity: target.id,
      details: { changed },
    });
    return { identity: toIdentity(target), changed };
  });
}

/** Oldest grant first. An operator read, like `identity list`: not audited. */
export async function listOperators(store: Pick<Store, 'listOperators'>): Promise<Operator[]> {
  return (await store.listOperators()).map((row) => ({
    identity: toIdentity(row.identity),
    granted_at: toIso(row.granted_at),
  }));
}

export async function isOperator(
  store: Pick<Store, 'findOperator'>,
  identityId: string,
): Promise<boolean> {
  return (await store.findOperator(identityId)) !== undefined;
}

/**
 * An operator acting in the admin console, as the audit rows name them: service `admin`
 * with the operator's identity id as the actor id (the audit page's actor filter takes
 * either), their username and the client address in the details.
 */
export function operatorActor(operator: Identity, address: string): Actor {
  return {
    service_name: 'admin',
    service_id: operator.id,
    details: { via: 'admin', operator: operator.username, address },
  };
}
