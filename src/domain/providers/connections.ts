import type { Clock } from '../../lib/clock.js';
import { toIso } from '../../lib/clock.js';
import type { Actor, AuditLog } from '../audit/audit-log.js';
import { DomainError, notFound } from '../errors.js';
import type { Store } from '../store.js';
import {
  type AuthorizeDeps,
  type TakenAuthorization,
  authorize,
  providerById,
} from './authorize.js';
import { ProviderRefusal } from './refusal.js';

export interface ConnectionDeps extends AuthorizeDeps {
  store: AuthorizeDeps['store'] &
    Pick<
      Store,
      | 'findLink'
      | 'claimLink'
      | 'markLinkVerified'
      | 'listLinks'
      | 'deleteLink'
      | 'findIdentityById'
      | 'listPasskeys'
      | 'holdIdentityRow'
      | 'transaction'
    >;
  clock: Clock;
  audit: Pick<AuditLog, 'write'>;
  /** SERVICE_FLOW_TTL_MINUTES: how long a connection's trip to the provider may take. */
  flowTtlMs: number;
  /** SERVICE_SIGN_IN_EMAIL_CODE: a verified address is then a way to sign in too. */
  signInEmailCode: boolean;
}

/** An account page's row: a configured provider and the accounts of it this identity holds. */
export interface Connection {
  provider: string;
  label: string;
  accounts: { subject: string; linked_at: string }[];
}

/** The configured providers, each with this identity's verified links to it. */
export async function listConnections(
  deps: Pick<ConnectionDeps, 'store' | 'providers'>,
  identityId: string,
): Promise<Connection[]> {
  const links = await deps.store.listLinks(identityId);
  return [...deps.providers.values()].map((provider) => ({
    provider: provider.id,
    label: provider.label,
    accounts: links
      .filter((link) => link.provider === provider.id && link.verified_at !== null)
      .map((link) => ({ subject: link.subject, linked_at: toIso(link.linked_at) })),
  }));
}

/** `POST /v1/account/connections/{provider}/connect`: the provider's URL for this browser. */
export function startConnection(
  deps: ConnectionDeps,
  input: { identityId: string; providerId: string; browser: string; origin: string },
): Promise<string> {
  return authorize(deps, {
    provider: providerById(deps, input.providerId),
    purpose: 'connect',
    flowId: null,
    identityId: input.identityId,
    browser: input.browser,
    origin: input.origin,
    expiresAt: deps.clock.now() + deps.flowTtlMs,
  });
}

/**
 * The callback of a connection: the browser must still be signed in as the identity that
 * started it; the account the provider proves becomes a verified link of that identity,
 * unless another identity holds it (SPEC 2.2: a pair belongs to one identity). Audited
 * (`provider_connect`) with the link, in one transaction.
 */
export async function finishConnection(
  deps: ConnectionDeps,
  actor: Actor,
  taken: TakenAuthorization,
  input: { params: Readonly<Record<string, string>>; signedInAs: string | null },
): Promise<void> {
  const identityId = taken.record.identity_id;
  if (identityId === null || input.signedInAs !== identityId) {
    throw new ProviderRefusal('not_signed_in');
  }
  const account = await taken.provider.redeem(taken.request, {
    params: input.params,
    now: deps.clock.now(),
  });
  const provider = taken.provider.id;
  await deps.store.transaction(async (tx) => {
    const now = deps.clock.now();
    const existing = await tx.findLink(provider, account.subject);
    if (existing && existing.identity_id !== identityId) {
      throw new ProviderRefusal('linked_elsewhere');
    }
    if (existing) {
      await tx.markLinkVerified(provider, account.subject, now);
    } else {
      const linked = await tx.claimLink({
        provider,
        subject: account.subject,
        identity_id: identityId,
        verified_at: now,
        linked_at: now,
      });
      if (!linked) throw new ProviderRefusal('linked_elsewhere');
    }
    await deps.audit.write(tx, actor, {
      action: 'provider_connect',
      target_identity: identityId,
      details: { provider, subject: account.subject },
    });
  });
}

/**
 * Removes one of the identity's links to a configured provider, refusing to remove its last
 * way to sign in: a password, a passkey, another verified link, or (with email sign-in
 * codes on) a verified address. Audited (`provider_disconnect`).
 */
export async function disconnect(
  deps: ConnectionDeps,
  actor: Actor,
  identityId: string,
  input: { providerId: string; subject: string },
): Promise<void> {
  const provider = providerById(deps, input.providerId);
  await deps.store.transaction(async (tx) => {
    // Racing disconnections of two last ways in must not both pass the count below.
    if (!(await tx.holdIdentityRow(identityId))) throw notFound();
    const [identity, links, passkeys] = await Promise.all([
      tx.findIdentityById(identityId),
      tx.listLinks(identityId),
      tx.listPasskeys(identityId),
    ]);
    if (!identity) throw notFound();
    const target = links.find(
      (link) => link.provider === provider.id && link.subject === input.subject,
    );
    if (!target) throw notFound();
    const otherLinks = links.filter((link) => link !== target && link.verified_at !== null);
    const emailCode = deps.signInEmailCode && identity.email_verified_at !== null;
    if (
      identity.password_hash === null &&
      passkeys.length === 0 &&
      otherLinks.length === 0 &&
      !emailCode
    ) {
      throw new DomainError(
        'validation_error',
        `This is your only way to sign in: set a password or add a passkey before you disconnect ${provider.label}.`,
      );
    }
    if (!(await tx.deleteLink(identityId, provider.id, input.subject))) throw notFound();
    await deps.audit.write(tx, actor, {
      action: 'provider_disconnect',
      target_identity: identityId,
      details: { provider: provider.id, subject: input.subject },
    });
  });
}
