import type { FlowRecord } from '../../domain/login-flows/flow.js';
import type { AppDeps } from '../deps.js';
import { providerButtons } from '../provider-pages/render.js';
import { emailCodeOffer } from './email-code-page.js';
import { escapeHtml } from './render.js';
import { registrationLink } from '../registration-page/render.js';

/**
 * What the login page offers beside the password form and the passkey button: other ways
 * in (each a block of HTML under "or", its values escaped) and links to the other
 * self-service pages. Each feature adds its part here, from its settings, so the page and
 * its failure re-render show the same offers.
 */
export interface LoginOffers {
  alternatives: string[];
  links: string[];
}

export const NO_OFFERS: LoginOffers = { alternatives: [], links: [] };

export function loginOffers(deps: AppDeps, flow: FlowRecord): LoginOffers {
  const providers = providerButtons(flow, deps.providers.values());
  return {
    alternatives: [
      ...(providers ? [providers] : []),
      ...(deps.signInEmailCode ? [emailCodeOffer(flow)] : []),
    ],
    links: [
      recoveryLink(flow),
      ...(deps.config.registration.open ? [registrationLink(flow.return_to)] : []),
    ],
  };
}

/**
 * "Forgot your password?", always: mail always has a way out (SMTP, or the log on the
 * embedded default), and the recovery page answers the same for every address, so the
 * link tells no one anything (docs/recovery.md).
 */
function recoveryLink(flow: FlowRecord): string {
  const query = flow.return_to ? `?return_to=${encodeURIComponent(flow.return_to)}` : '';
  return `<a href="${escapeHtml(`/v1/recovery${query}`)}">Forgot your password?</a>`;
}
