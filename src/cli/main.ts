#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.js';
import { toAuditEntry } from '../domain/audit/audit.js';
import { DomainError } from '../domain/errors.js';
import { sweep } from '../domain/sweep.js';
import { serve } from '../serve.js';
import { cliActor, printJson, withServices } from './context.js';
import { identityCommands } from './identity.js';
import { svcCommands } from './svc.js';

const program = new Command()
  .name('tessera')
  .description('Tessera identity and session service')
  .exitOverride()
  .showHelpAfterError();

program
  .command('serve')
  .description('run the HTTP service (migrates first)')
  .action(() => serve());

program
  .command('migrate')
  .description('apply pending database migrations')
  .action(async () => {
    const applied = await withServices((deps) => deps.store.migrate(), { migrate: false });
    console.log(applied.length ? `applied ${applied.join(', ')}` : 'database is up to date');
  });

program
  .command('sweep')
  .description('delete expired sessions, flows and rate-limit counters now')
  .option('--json', 'print one JSON document')
  .action(async (options: { json?: boolean }) => {
    const removed = await withServices(async (deps) => {
      const result = await sweep(deps.store, deps.clock);
      await deps.store.transaction((tx) =>
        deps.audit.write(tx, cliActor(), { action: 'sweep', details: { ...result } }),
      );
      return result;
    });
    if (options.json) return printJson(removed);
    console.log(
      `removed ${removed.sessions} session(s), ${removed.flows} flow(s), ${removed.rate_limits} rate-limit counter(s)`,
    );
  });

program
  .command('audit')
  .description('the audit log')
  .command('list')
  .description('most recent audit entries first')
  .option('--limit <n>', 'how many entries', '50')
  .option('--json', 'print one JSON document')
  .action(async (options: { limit: string; json?: boolean }) => {
    const limit = Number(options.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
      throw new DomainError('validation_error', '--limit must be an integer from 1 to 10000');
    }
    const entries = await withServices(async (deps) =>
      (await deps.store.listAuditRecords(limit)).map(toAuditEntry),
    );
    if (options.json) return printJson(entries);
    for (const entry of entries) {
      const who = entry.service_name ?? '-';
      const target = entry.target_identity ?? '-';
      console.log(
        `${entry.timestamp}  ${entry.action}  ${entry.outcome}  service=${who}  identity=${target}  ${JSON.stringify(entry.details)}`,
      );
    }
  });

identityCommands(program);
svcCommands(program);

function describe(error: unknown): string {
  if (error instanceof DomainError) {
    return error.hasClientMessage ? `${error.code}: ${error.message}` : error.code;
  }
  if (error instanceof ConfigError) return error.message;
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode);
  console.error(`tessera: ${describe(error).split('\n')[0]}`);
  process.exit(1);
}
