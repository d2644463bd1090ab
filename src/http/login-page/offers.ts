import type { FlowRecord } from '../../domain/login-flows/flow.js';
import type { AppDeps } from '../deps.js';
import { providerButtons } from '../provider-pages/render.js';

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
  return providers ? { alternatives: [providers], links: [] } : NO_OFFERS;
}
