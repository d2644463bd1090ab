import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { callbackPath } from '../domain/providers/authorize.js';
import { printList } from './output.js';

/** `tessera provider`: the upstream providers of SERVICE_PROVIDERS_FILE (docs/providers.md). */
export function providerCommands(program: Command): void {
  const provider = program
    .command('provider')
    .description('upstream providers: sign in with Google, GitHub, any OpenID Connect provider');
  provider
    .command('list')
    .description('each provider of SERVICE_PROVIDERS_FILE and whether its discovery works now')
    .option('--json', 'print one JSON document')
    .action(async (options: { json?: boolean }) => {
      const config = loadConfig();
      // Imported on use: openid-client and jose cost every other command ~30 ms to load.
      const { upstreamProviders } = await import('../adapters/providers/index.js');
      const rows = await Promise.all(
        [...upstreamProviders(config.providers).values()].map(async (entry) => ({
          id: entry.id,
          type: entry.type,
          label: entry.label,
          redirect_uri:
            config.publicUrl === null
              ? callbackPath(entry.id)
              : `${config.publicUrl}${callbackPath(entry.id)}`,
          discovery: await entry.discover(),
        })),
      );
      printList(rows, options.json, 'no providers (SERVICE_PROVIDERS_FILE is not set)', (row) =>
        [
          row.id,
          row.type,
          row.discovery.state === 'ok'
            ? `ok ${row.discovery.issuer ?? row.discovery.authorizationEndpoint}`
            : `failed: ${row.discovery.error}`,
          row.redirect_uri,
        ].join('  '),
      );
    });
}
