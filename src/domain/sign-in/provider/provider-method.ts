import type { Clock } from '../../../lib/clock.js';
import type { AuditLog } from '../../audit/audit-log.js';
import { DomainError, validationError } from '../../errors.js';
import { parseEmail } from '../../identities/email.js';
import { insertNewIdentity } from '../../identities/identity-service.js';
import { BROWSER_ACTOR } from '../../login-flows/sign-in-audit.js';
import { ProviderRefusal } from '../../providers/refusal.js';
import type { UpstreamAccount } from '../../providers/upstream.js';
import type { Store } from '../../store.js';
import { UniqueViolation } from '../../unique-violation.js';
import type { SignInMethod, SignInOutcome } from '../method.js';
import { identityFor, uniqueUsername, usernameStem } from './new-identity.js';

export interface ProviderMethodDeps {
  store: Pick<
    Store,
    'findLink' | 'findIdentityById' | 'findIdentityByUsername' | 'findIdentityByEmail'
  >;
  clock: Clock;
  audit: Pick<AuditLog, 'write'>;
  /** SERVICE_REGISTRATION: whether an account nobody is linked to may become an identity. */
  config: { registration: { open: boolean } };
}

/** An upstream account the provider's callback proved (provider-sign-in.ts). */
export interface ProviderInput {
  providerId: string;
  /** The entry's `trust_email`: whether the provider's "verified" is taken. */
  trustEmail: boolean;
  account: UpstreamAccount;
}

function isInput(fields: Readonly<Record<string, unknown>>): boolean {
  const account = fields.account as Partial<UpstreamAccount> | undefined;
  return (
    typeof fields.providerId === 'string' &&
    typeof fields.trustEmail === 'boolean' &&
    typeof account?.subject === 'string'
  );
}

/**
 * Sign-in with an upstream provider (docs/providers.md). Its proof is not a submission but
 * the provider's callback, checked before the flow mechanics are reached (state bound to
 * the flow and the browser, PKCE, the ID token against the provider's keys and the nonce):
 * `submitToFlow` is handed the account it proved, so attempt caps, limits, the second
 * factor and completion are those of every method.
 *
 * The account's verified link `(provider id, subject)` names the identity. Without one, a
 * new identity is made only while registration is open, and never for an address another
 * identity has: an identity is never found by its address (a provider that does not verify
 * addresses would hand it over). The new identity, its verified link and its audit row are
 * written in the session's transaction (`redeem`), so a sign-in that fails there leaves
 * nothing behind.
 */
export const providerMethod = {
  id: 'provider',
  assurance: 'aal1',

  parse(fields) {
    if (!isInput(fields)) throw validationError('a provider sign-in comes from its callback');
    return fields as unknown as ProviderInput;
  },

  claim(fields) {
    const provider = fields?.providerId;
    return { provider: typeof provider === 'string' ? provider : null };
  },

  async authenticate(deps, input, notes): Promise<SignInOutcome> {
    const { providerId, account } = input;
    const link = await deps.store.findLink(providerId, account.subject);
    if (link) {
      notes.identityId = link.identity_id;
      // A pending claim never signs in (SPEC 2.2): nobody confirmed it.
      if (link.verified_at === null) return { failure: 'invalid_credentials' };
      const identity = await deps.store.findIdentityById(link.identity_id);
      if (!identity) return { failure: 'invalid_credentials' };
      if (identity.state !== 'active') return { failure: 'identity_disabled' };
      return { identity };
    }
    if (!deps.config.registration.open) throw new ProviderRefusal('not_registered');
    const email = account.email === null ? null : parseEmail(account.email);
    if (email !== null && (await deps.store.findIdentityByEmail(email))) {
      throw new ProviderRefusal('email_taken');
    }
    const username = await uniqueUsername(deps.store, usernameStem(account, providerId));
    const now = deps.clock.now();
    const identity = identityFor(account, username, input.trustEmail, now);
    return {
      identity,
      async redeem(tx) {
        try {
          await insertNewIdentity(tx, identity);
        } catch (error) {
          // The name or the address was taken since it was read: the user tries again.
          const taken = error instanceof DomainError && error.code === 'username_taken';
          if (taken || error instanceof UniqueViolation) throw new ProviderRefusal('conflict');
          throw error;
        }
        const linked = await tx.claimLink({
          provider: providerId,
          subject: account.subject,
          identity_id: identity.id,
          verified_at: now,
          linked_at: now,
        });
        // A racing first sign-in of the same account linked it to its own new identity.
        if (!linked) return false;
        await deps.audit.write(tx, BROWSER_ACTOR, {
          action: 'identity_register',
          target_identity: identity.id,
          details: {
            username: identity.username,
            provider: providerId,
            email_verified: identity.email_verified_at !== null,
            sign_in_method: 'provider',
          },
        });
        return true;
      },
    };
  },
} as const satisfies SignInMethod<'provider', ProviderInput, ProviderMethodDeps>;
