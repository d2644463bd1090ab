import type { Command } from 'commander';
import { validationError } from '../domain/errors.js';
import {
  registerIdentity,
  resolveIdentity,
  setIdentityState,
} from '../domain/identities/identity-service.js';
import { toIdentity } from '../domain/identities/identity.js';
import { cliActor, printJson, withServices } from './context.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One trailing newline is the terminator of `echo`/a heredoc, not part of the password.
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

export function identityCommands(program: Command): void {
  const identity = program.command('identity').description('identities (users)');

  identity
    .command('create')
    .description('create an identity; the password is read from standard input')
    .requiredOption('--username <username>', 'unique username')
    .option('--display-name <name>', 'display name (default: the username)')
    .option('--password-stdin', 'read the password from standard input')
    .option('--json', 'print one JSON document')
    .action(
      async (options: {
        username: string;
        displayName?: string;
        passwordStdin?: boolean;
        json?: boolean;
      }) => {
        if (!options.passwordStdin) {
          throw validationError('--password-stdin is required: passwords never go in arguments');
        }
        const password = await readStdin();
        const created = await withServices((deps) =>
          registerIdentity(deps, cliActor(), {
            username: options.username,
            password,
            display_name: options.displayName,
          }),
        );
        if (options.json) return printJson(created);
        console.log(`created identity ${created.username} (${created.id})`);
      },
    );

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
        if (options.revokeSessions) console.log(`revoked ${result.revokedSessions} session(s)`);
      },
    );
  }
}
