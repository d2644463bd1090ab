import type { Command } from 'commander';
import {
  createWebhook,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  resendDelivery,
} from '../domain/webhooks/webhook-service.js';
import { cliActor, withServices } from './context.js';
import { parseCount } from './input.js';
import { printJson, printList } from './output.js';

/** `tessera webhook`: where events are posted (docs/webhooks.md). */
export function webhookCommands(program: Command): void {
  const webhook = program.command('webhook').description('webhooks: events posted to your URLs');
  webhook
    .command('create')
    .description('post the given events to a URL; prints the signing secret, once')
    .requiredOption('--url <url>', 'the receiver, http:// or https://')
    .requiredOption('--events <e1,e2>', 'event names, comma-separated (docs/webhooks.md)')
    .option('--json', 'print one JSON document')
    .action(async (options: { url: string; events: string; json?: boolean }) => {
      const created = await withServices((deps) =>
        createWebhook(deps, cliActor(), { url: options.url, events: options.events.split(',') }),
      );
      if (options.json) return printJson(created);
      console.log(`webhook ${created.webhook.id}  ${created.webhook.url}`);
      console.log(`events: ${created.webhook.events.join(', ')}`);
      console.log(`secret: ${created.secret}`);
      console.log('(the secret is shown only now: keep it with the receiver)');
    });
  webhook
    .command('list')
    .description('every webhook, oldest first')
    .option('--json', 'print one JSON document')
    .action(async (options: { json?: boolean }) => {
      const webhooks = await withServices((deps) => listWebhooks(deps.store));
      printList(webhooks, options.json, 'no webhooks', (entry) =>
        [entry.id, entry.created_at, entry.url, entry.events.join(',')].join('  '),
      );
    });
  webhook
    .command('delete')
    .description('delete a webhook; its deliveries still queued are dropped')
    .argument('<id>', 'the webhook')
    .option('--json', 'print one JSON document')
    .action(async (id: string, options: { json?: boolean }) => {
      const deleted = await withServices((deps) => deleteWebhook(deps, cliActor(), id));
      if (options.json) return printJson(deleted);
      console.log(`deleted webhook ${deleted.id}`);
    });
  webhook
    .command('deliveries')
    .description('the delivery log, newest first (sent deliveries are kept 7 days)')
    .option('--webhook <id>', 'only this webhook')
    .option('--limit <n>', 'at most this many (1-10000, default 50)')
    .option('--json', 'print one JSON document')
    .action(async (options: { webhook?: string; limit?: string; json?: boolean }) => {
      const limit = parseCount(options.limit);
      const entries = await withServices((deps) =>
        listDeliveries(deps.store, { webhookId: options.webhook, limit }),
      );
      printList(entries, options.json, 'no deliveries', (entry) => {
        const when = entry.next_attempt_at ? `  next=${entry.next_attempt_at}` : '';
        const error = entry.last_error ? `  error=${JSON.stringify(entry.last_error)}` : '';
        return `${entry.id}  ${entry.state}  ${entry.created_at}  ${entry.template}  webhook=${entry.to}  attempts=${entry.attempts}${when}${error}`;
      });
    });
  webhook
    .command('resend')
    .description('send a failed delivery again (same webhook-id)')
    .argument('<delivery-id>', 'the delivery')
    .action(async (id: string) => {
      await withServices((deps) => resendDelivery(deps, cliActor(), id));
      console.log(`queued delivery ${id} again`);
    });
}
