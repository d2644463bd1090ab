import type { Command } from 'commander';
import { listMail, parseOutboxState, retryMail } from '../domain/outbox/outbox-admin.js';
import { validationError } from '../domain/errors.js';
import { cliActor, withServices } from './context.js';
import { parseCount } from './input.js';
import { printJson, printList } from './output.js';

/** `tessera mail`: the outbox's mail, and putting failed mail back in the queue (docs/mail.md). */
export function mailCommands(program: Command): void {
  const mail = program.command('mail').description('mail waiting, sent and failed');
  mail
    .command('list')
    .description('mail in the outbox, newest first (sent mail is kept 7 days)')
    .option('--state <state>', 'only pending, sent or failed')
    .option('--limit <n>', 'at most this many (1-10000, default 50)')
    .option('--json', 'print one JSON document')
    .action(async (options: { state?: string; limit?: string; json?: boolean }) => {
      const state = parseOutboxState(options.state);
      const limit = parseCount(options.limit);
      const entries = await withServices((deps) => listMail(deps.store, { state, limit }));
      printList(entries, options.json, 'no mail', (entry) => {
        const when = entry.next_attempt_at ? `  next=${entry.next_attempt_at}` : '';
        const error = entry.last_error ? `  error=${JSON.stringify(entry.last_error)}` : '';
        return `${entry.id}  ${entry.state}  ${entry.created_at}  ${entry.template}  to=${entry.to}  attempts=${entry.attempts}${when}${error}`;
      });
    });
  mail
    .command('retry')
    .description('send failed mail again: one by id, or all with --failed')
    .argument('[id]', 'the failed mail to send again')
    .option('--failed', 'every failed mail')
    .option('--json', 'print one JSON document')
    .action(async (id: string | undefined, options: { failed?: boolean; json?: boolean }) => {
      if ((id === undefined) === (options.failed !== true)) {
        throw validationError('give either a mail id or --failed');
      }
      const ids = await withServices((deps) =>
        retryMail(deps, cliActor(), id !== undefined ? { id } : { failed: true }),
      );
      if (options.json) return printJson({ requeued: ids });
      console.log(`queued ${ids.length} mail(s) again`);
    });
}
