import type { ProviderSettings } from '../../domain/providers/provider-settings.js';
import type { UpstreamProvider, UpstreamProviders } from '../../domain/providers/upstream.js';
import { gitHubProvider } from './github.js';
import { openIdConnectProvider } from './openid-connect.js';

/** The providers of SERVICE_PROVIDERS_FILE, by id: GitHub's own API, every other by OpenID Connect. */
export function upstreamProviders(settings: readonly ProviderSettings[]): UpstreamProviders {
  return new Map<string, UpstreamProvider>(
    settings.map((entry) => [
      entry.id,
      entry.type === 'github' ? gitHubProvider(entry) : openIdConnectProvider(entry),
    ]),
  );
}
