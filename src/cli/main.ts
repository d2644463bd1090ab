#!/usr/bin/env node
// First: sizes libuv's threadpool before anything starts it.
import './threadpool.js';
import { Command, CommanderError } from 'commander';
import { unknownVariableWarnings } from '../config.js';
import { sweep } from '../domain/sweep.js';
import { adminCommands } from './admin.js';
import { auditCommands } from './audit.js';
import { cliActor, withServices } from './context.js';
import { dbCommands } from './db.js';
import { exitStatus, reportFailure, toFailure } from './failure.js';
import { identityCommands } from './identity.js';
import { legacyTokenCommands } from './legacy-tokens.js';
import { mailCommands } from './mail.js';
import { webhookCommands } from './webhook.js';
import { providerCommands } from './provider.js';
import { oidcCommands } from './oidc.js';
import { printJson, wantsJson } from './output.js';
import { pepperCommands } from './pepper.js';
import { svcCommands } from './svc.js';
import { packageVersion } from './version.js';

const json = wantsJson(process.argv.slice(2));

const program = new Command()
  .name('tessera')
  .description('Tessera identity and session service')
  // Not commander's .version(), which wants the text up front: package.json is read only
  // when asked for, so no other command depends on finding it (a build run from another
  // place has none above it).
  .option('-V, --version', 'output the version number')
  .on('option:version', () => {
    process.stdout.write(`${packageVersion()}\n`);
    process.exit(0);
  })
  .exitOverride()
  // With --json, commander's own error text and help stay off the terminal: the failure
  // is reported once, as the JSON document. Subcommands inherit this configuration.
  .configureOutput(json ? { writeErr: () => undefined } : {})
  .showHelpAfterError(!json)
  // `serve` logs these as JSON lines (serve.ts); any other command says them on stderr.
  .hook('preAction', (_program, command) => {
    if (command.name() === 'serve') return;
    for (const warning of unknownVariableWarnings(process.env)) console.warn(`tessera: ${warning}`);
  });

program
  .command('serve')
  .description('run the HTTP service (migrates first)')
  .action(async () => {
    // Imported on use: the other commands never load the HTTP adapter.
    const { serve } = await import('../serve.js');
    await serve();
  });

program
  .command('migrate')
  .description('apply pending database migrations')
  .option('--json', 'print one JSON document')
  .action(async (options: { json?: boolean }) => {
    const applied = await withServices((deps) => deps.store.migrate(), { migrate: false });
    if (options.json) return printJson({ applied });
    console.log(applied.length ? `applied ${applied.join(', ')}` : 'database is up to date');
  });

program
  .command('sweep')
  .description('delete expired sessions, flows and rate-limit counters now')
  .option('--json', 'print one JSON document')
  .action(async (options: { json?: boolean }) => {
    const removed = await withServices(async (deps) => {
      const result = await sweep(deps.store, deps.clock, { oidc: deps.config.oidcIssuer !== null });
      await deps.store.transaction((tx) =>
        deps.audit.write(tx, cliActor(), { action: 'sweep', details: { ...result } }),
      );
      return result;
    });
    if (options.json) return printJson(removed);
    const oidc =
      removed.oidc_models === undefined
        ? ''
        : `, ${removed.oidc_models} OIDC model(s), ${removed.oidc_keys} OIDC signing key(s)`;
    console.log(
      `removed ${removed.sessions} session(s), ${removed.flows} flow(s), ${removed.rate_limits} rate-limit counter(s)${oidc}`,
    );
  });

adminCommands(program);
auditCommands(program);
dbCommands(program);
identityCommands(program);
pepperCommands(program);
oidcCommands(program);
svcCommands(program);
legacyTokenCommands(program);
mailCommands(program);
webhookCommands(program);
providerCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  // --help and --version end here too, with status 0 and their output already written.
  if (error instanceof CommanderError && error.exitCode === 0) process.exit(0);
  const failure = toFailure(error);
  // Without --json, commander has already printed its usage error with the help.
  if (json || !(error instanceof CommanderError)) reportFailure(failure, json);
  process.exit(exitStatus(failure));
}
