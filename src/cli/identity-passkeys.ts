import type { Command } from 'commander';
import { resolveIdentity } from '../domain/identities/identity-service.js';
import { listIdentityPasskeys, resetPasskeys } from '../domain/passkeys/passkey-service.js';
import { cliActor, withServices } from './context.js';
import { printJson, printList } from './output.js';

/** `tessera identity passkeys` and `identity reset-passkeys` (docs/passkeys.md, operators). */
export function passkeyCommands(identity: Command): void {
  identity
    .command('passkeys <idOrUsername>')
    .description("list an identity's passkeys, oldest first")
    .option('--json', 'print one JSON document')
    .action(async (idOrUsername: string, options: { json?: boolean }) => {
      const passkeys = await withServices(async (deps) => {
        const target = await resolveIdentity(deps.store, idOrUsername);
        return listIdentityPasskeys(deps.store, target.id);
      });
      printList(
        passkeys,
        options.json,
        'no passkeys',
        (passkey) =>
          `${passkey.id}  ${passkey.name}  added ${passkey.created_at}  last used ${passkey.last_used_at ?? 'never'}`,
      );
    });

  identity
    .command('reset-passkeys <idOrUsername>')
    .description('remove every passkey of an identity (a lost device); audited')
    .option('--json', 'print one JSON document')
    .action(async (idOrUsername: string, options: { json?: boolean }) => {
      const result = await withServices(async (deps) => {
        const target = await resolveIdentity(deps.store, idOrUsername);
        const { removed } = await resetPasskeys(deps, cliActor(), target.id);
        return { identity_id: target.id, username: target.username, removed };
      });
      if (options.json) return printJson(result);
      console.log(
        `removed ${result.removed} passkey(s) of ${result.username} (${result.identity_id})`,
      );
    });
}
