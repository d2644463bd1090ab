import type { Command } from 'commander';
import { withServices } from './context.js';
import { printJson } from './output.js';

/**
 * `tessera legacy-tokens`: what still keeps pre-checksum tokens acceptable (docs/tokens.md).
 * Sessions and flows go by themselves (expiry, then the sweep); service tokens never
 * expire, so the ones listed here are to be rotated.
 */
export function legacyTokenCommands(program: Command): void {
  program
    .command('legacy-tokens')
    .description('count tokens minted before checksums that are still accepted')
    .option('--json', 'print one JSON document')
    .action(async (options: { json?: boolean }) => {
      const found = await withServices(async (deps) => ({
        counts: await deps.store.countLegacyTokens(),
        services: (await deps.store.listServiceTokens()).filter(
          (token) => token.token_format === 'legacy' && token.revoked_at === null,
        ),
      }));
      const services = found.services.map(({ id, name }) => ({ id, name }));
      if (options.json) {
        return printJson({
          sessions: found.counts.session,
          service_tokens: found.counts.service,
          flows: found.counts.flow,
          service_tokens_to_rotate: services,
        });
      }
      const { session, service, flow } = found.counts;
      console.log(
        `pre-checksum tokens still accepted: ${session} session(s), ${service} service token(s), ${flow} flow(s)`,
      );
      for (const { id, name } of services) console.log(`rotate service ${name} (${id})`);
      if (session + service + flow === 0) {
        console.log('none remain: a token whose checksum fails is refused without a lookup');
      }
    });
}
