import { emailCodeMethod, type EmailCodeMethodDeps } from './email-code/email-code-method.js';
import { linkMethod, type LinkMethodDeps } from './link/link-method.js';
import { passkeyMethod, type PasskeyMethodDeps } from './passkey/passkey-method.js';
import { passwordMethod, type PasswordMethodDeps } from './password/password-method.js';
import { providerMethod, type ProviderMethodDeps } from './provider/provider-method.js';

/**
 * Every sign-in method. Sessions' `authenticated_via`, the flow routes and the browser
 * CORS zone are all built from this list (and the HTTP surfaces in http/flow-methods.ts).
 */
export const SIGN_IN_METHODS = [
  passwordMethod,
  linkMethod,
  passkeyMethod,
  emailCodeMethod,
  providerMethod,
] as const;

export type SignInMethodId = (typeof SIGN_IN_METHODS)[number]['id'];

export const SIGN_IN_METHOD_IDS: readonly SignInMethodId[] = SIGN_IN_METHODS.map(({ id }) => id);

/** What the composition root provides so that every method can authenticate. */
export type SignInMethodDeps = PasswordMethodDeps &
  LinkMethodDeps &
  PasskeyMethodDeps &
  EmailCodeMethodDeps &
  ProviderMethodDeps;
