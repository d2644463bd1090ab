import type { Command } from 'commander';
import { resolveIdentity } from '../domain/identities/identity-service.js';
import { toIdentity } from '../domain/identities/identity.js';
import { removeSecondFactor, secondFactorStatus } from '../domain/second-factor/enrolment.js';
import { toIso } from '../lib/clock.js';
import { cliActor, withServices } from './context.js';
import { printJson } from './output.js';

/** `identity second-factor` and `identity reset-second-factor` (docs/two-factor.md). */
export function secondFactorCommands(identity: Command): void {
  identity
    .command('second-factor <idOrUsername>')
    .description("show an identity's second factor: enrolled, since, recovery codes left")
    .option('--json', 'print one JSON document')
    .action(async (idOrUsername: string, options: { json?: boolean }) => {
      const { found, status } = await withServices(async (deps) => {
        const found = await resolveIdentity(deps.store, idOrUsername);
        return { found, status: await secondFactorStatus(deps.store, found.id) };
      });
      const view = { ...status, since: status.since === null ? null : toIso(status.since) };
      if (options.json) return printJson({ identity: toIdentity(found), second_factor: view });
      console.log(`${found.username} (${found.id})`);
      if (view.enabled) {
        console.log(`second factor: on (${view.methods.join(', ')}) since ${view.since}`);
        console.log(`recovery codes left: ${view.recovery_codes_left}`);
      } else {
        console.log(`second factor: off${view.pending ? ' (an enrolment is pending)' : ''}`);
      }
    });

  identity
    .command('reset-second-factor <idOrUsername>')
    .description(
      "remove an identity's authenticator and recovery codes (a lost phone); it then signs in with its password alone",
    )
    .option('--json', 'print one JSON document')
    .action(async (idOrUsername: string, options: { json?: boolean }) => {
      const { found, wasOn } = await withServices(async (deps) => {
        const found = await resolveIdentity(deps.store, idOrUsername);
        const wasOn = await removeSecondFactor(
          deps,
          cliActor(),
          found.id,
          'identity_second_factor_reset',
        );
        return { found, wasOn };
      });
      if (options.json) return printJson({ identity: toIdentity(found), was_enabled: wasOn });
      console.log(
        wasOn
          ? `reset the second factor of ${found.username} (${found.id})`
          : `${found.username} (${found.id}) had no second factor; nothing left to reset`,
      );
    });
}
