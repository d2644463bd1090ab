import type { Command } from 'commander';
import {
  registerIdentity,
  resolveIdentity,
  setIdentityState,
} from '../domain/identities/identity-service.js';
import { toIdentity } from '../domain/identities/identity.js';
import { setIdentityEmail } from '../domain/identities/identity-email.js';
import { validationError } from '../domain/errors.js';
import { listIdentities, parseIdentityListQuery } from '../domain/identities/list-identities.js';
import { setPassword } from '../domain/passwords/set-password.js';
import { cliActor, withServices } from './context.js';
import { passkeyCommands } from './identity-passkeys.js';
import { transferCommands } from './identity-transfer.js';
import { parseCount, readPasswordFromStdin } from './input.js';
import { printJson, printList } from './output.js';
import { secondFactorCommands } from './second-factor.js';

export function identityCommands(program: Command): void {
  const identity = program.command('identity').description('identities (users)');

  identity
    .command('create')
    .description('create an identity; the password is read from standard input')
    .requiredOption('--username <username>', 'unique username')
    .option('--display-name <name>', 'display name (default: the username)')
    .option('--email <address>', 'email address (no other identity may have it)')
    .option('--email-verified', 'mark the address as verified (you vouch for it)')
    .option('--password-stdin', 'read the password from standard input')
    .option('--json', 'print one JSON document')
    .action(
      async (options: {
        username: string;
        displayName?: string;
        email?: string;
        emailVerified?: boolean;
        passwordStdin?: boolean;
        json?: boolean;
      }) => {
        const password = await readPasswordFromStdin(options.passwordStdin);
        const created = await withServices((deps) =>
          registerIdentity(deps, cliActor(), {
            username: options.username,
            password,
            display_name: options.displayName,
            email: options.email,
            email_verified: options.emailVerified,
          }),
        );
        if (options.json) return printJson(created);
        console.log(`created identity ${created.username} (${created.id})`);
      },
    );

  identity
    .command('list')
    .description('list identities, newest first')
    .option('--state <state>', 'only identities in this state: active or disabled')
    .option('--limit <n>', 'at most this many (1-10000, default 50)')
    .option('--json', 'print one JSON document')
    .action(async (options: { state?: string; limit?: string; json?: boolean }) => {
      const query = parseIdentityListQuery({
        state: options.state,
        limit: parseCount(options.limit),
      });
      const identities = await withServices((deps) => listIdentities(deps.store, query));
      printList(
        identities,
        options.json,
        'no identities',
        (found) => `${found.id}  ${found.username}  ${found.state}  created ${found.created_at}`,
      );
    });

  identity
    .command('show <idOrUsername>')
    .description('show an identity by id or username')
    .option('--json', 'print one JSON document')
    .action(async (idOrUsername: string, options: { json?: boolean }) => {
      const found = await withServices(async (deps) =>
        toIdentity(await resolveIdentity(deps.store, idOrUsername)),
      );
      if (options.json) return printJson(found);
      for (const [key, value] of Object.entries(found)) console.log(`${key}: ${value ?? ''}`);
    });

  identity
    .command('set-password <idOrUsername>')
    .description(
      "set an identity's password from standard input; revokes its sessions unless --keep-sessions",
    )
    .option('--password-stdin', 'read the password from standard input')
    .option('--keep-sessions', 'keep the live sessions of the identity')
    .option('--json', 'print one JSON document')
    .action(
      async (
        idOrUsername: string,
        options: { passwordStdin?: boolean; keepSessions?: boolean; json?: boolean },
      ) => {
        const password = await readPasswordFromStdin(options.passwordStdin);
        const changed = await withServices(async (deps) => {
          const target = await resolveIdentity(deps.store, idOrUsername);
          return setPassword(deps, cliActor(), target.id, password, {
            revokeSessions: !options.keepSessions,
          });
        });
        if (options.json) return printJson(changed);
        console.log(`set the password of ${changed.identity.username} (${changed.identity.id})`);
        if (!options.keepSessions) console.log(`revoked ${changed.revoked_sessions} session(s)`);
      },
    );

  identity
    .command('set-email <idOrUsername> [address]')
    .description(
      "set an identity's email address (a new one unverified unless --verified), or --remove it",
    )
    .option('--verified', 'mark the address as verified (you vouch for it)')
    .option('--remove', 'remove the address')
    .option('--json', 'print one JSON document')
    .action(
      async (
        idOrUsername: string,
        address: string | undefined,
        options: { verified?: boolean; remove?: boolean; json?: boolean },
      ) => {
        if ((address === undefined) === !options.remove) {
          throw validationError('give an address, or --remove (not both)');
        }
        const changed = await withServices((deps) =>
          setIdentityEmail(deps, cliActor(), idOrUsername, {
            email: address ?? null,
            verified: options.verified,
          }),
        );
        if (options.json) return printJson(changed);
        const what =
          changed.email === null
            ? 'no email address'
            : `${changed.email} (${changed.email_verified ? 'verified' : 'unverified'})`;
        console.log(`${changed.username} (${changed.id}) now has ${what}`);
      },
    );

  for (const [name, state] of [
    ['disable', 'disabled'],
    ['enable', 'active'],
  ] as const) {
    const command = identity
      .command(`${name} <idOrUsername>`)
      .description(`${name} an identity by id or username`)
      .option('--json', 'print one JSON document');
    if (name === 'disable') {
      command.option('--revoke-sessions', 'also revoke every live session of the identity');
    }
    command.action(
      async (idOrUsername: string, options: { json?: boolean; revokeSessions?: boolean }) => {
        const result = await withServices((deps) =>
          setIdentityState(deps, cliActor(), idOrUsername, state, {
            revokeSessions: options.revokeSessions,
          }),
        );
        if (options.json) return printJson(result);
        console.log(`${result.identity.username} (${result.identity.id}) is now ${state}`);
        if (options.revokeSessions) console.log(`revoked ${result.revoked_sessions} session(s)`);
      },
    );
  }

  secondFactorCommands(identity);
  transferCommands(identity);
  passkeyCommands(identity);
}
