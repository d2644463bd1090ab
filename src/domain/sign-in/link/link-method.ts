import { notFound, validationError } from '../../errors.js';
import { type LinkKey, requireLinkKey, requireLinkKeyPart } from '../../links/link.js';
import type { Store } from '../../store.js';
import type { SignInMethod, SignInOutcome } from '../method.js';

export interface LinkMethodDeps {
  store: Pick<Store, 'findLink' | 'findIdentityById'>;
}

/** A key part worth recording: one that could name a link, else null. */
function claimed(field: keyof LinkKey, value: unknown): string | null {
  if (typeof value !== 'string') return null;
  try {
    return requireLinkKeyPart(field, value);
  } catch {
    return null;
  }
}

/**
 * A (provider, subject) pair the calling service vouches for, after its own sign-in with
 * that provider. A pair nobody holds names no identity: `invalid_credentials`, on which
 * `POST /v1/authenticate/link` creates one from the seed (link-sign-in.ts). A pending
 * (unverified) claim never signs in: that would sign someone into an account nobody
 * confirmed.
 */
export const linkMethod = {
  id: 'link',
  assurance: 'aal1',

  parse(fields) {
    const { provider, subject } = fields;
    if (typeof provider !== 'string' || typeof subject !== 'string') {
      throw validationError('provider and subject are required');
    }
    return requireLinkKey({ provider, subject });
  },

  claim(fields) {
    return {
      provider: claimed('provider', fields?.provider),
      subject: claimed('subject', fields?.subject),
    };
  },

  async authenticate(deps, key, notes): Promise<SignInOutcome> {
    const link = await deps.store.findLink(key.provider, key.subject);
    if (!link) return { failure: 'invalid_credentials' };
    notes.identityId = link.identity_id;
    if (link.verified_at === null) {
      throw validationError(
        'the (provider, subject) pair is an unverified link and cannot sign in',
      );
    }
    const identity = await deps.store.findIdentityById(link.identity_id);
    if (!identity) throw notFound();
    if (identity.state !== 'active') return { failure: 'identity_disabled' };
    return { identity };
  },
} as const satisfies SignInMethod<'link', LinkKey, LinkMethodDeps>;
