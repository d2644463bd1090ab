import type { Identity } from '../../domain/identities/identity.js';
import type { OutboxEntry } from '../../domain/outbox/outbox-admin.js';
import { WEBHOOK_EVENT_TYPES, type WebhookView } from '../../domain/webhooks/webhook.js';
import { escapeHtml } from '../login-page/render.js';
import { ADMIN_PATHS, consolePage, csrfField, notices, when } from './render.js';

export const WEBHOOK_NOTICES = {
  deleted: 'The webhook was deleted.',
  resent: 'The delivery is queued again.',
} as const;
export type WebhookNotice = keyof typeof WEBHOOK_NOTICES;

export interface WebhooksPageInput {
  operator: Identity;
  webhooks: WebhookView[];
  deliveries: OutboxEntry[];
  csrfToken: string;
  /** A webhook just created: its secret shown this once. */
  created?: { webhook: WebhookView; secret: string };
  notice?: string;
  error?: string;
  draft?: { url: string; events: string[] };
}

function createdSecret(created: NonNullable<WebhooksPageInput['created']>): string {
  return `<section aria-labelledby="created-heading" class="notice" role="status">
<h2 id="created-heading">Signing secret for ${escapeHtml(created.webhook.url)}</h2>
<p>Copy it now: it is shown this once. The receiver verifies every request with it.</p>
<p><code class="key" id="created-secret">${escapeHtml(created.secret)}</code></p>
</section>`;
}

function createForm(input: WebhooksPageInput): string {
  const chosen = new Set(input.draft?.events ?? []);
  const boxes = WEBHOOK_EVENT_TYPES.map(
    (type) =>
      `<label class="check"><input type="checkbox" name="events" value="${type}"${chosen.has(type) ? ' checked' : ''}> ${type}</label>`,
  ).join('\n');
  return `<section aria-labelledby="create-heading">
<h2 id="create-heading">Create a webhook</h2>
<form method="post" action="${ADMIN_PATHS.webhooks}">
${csrfField(input.csrfToken)}
<label for="url">URL</label>
<input id="url" name="url" type="url" required spellcheck="false" value="${escapeHtml(input.draft?.url ?? '')}">
<fieldset><legend>Events</legend>
${boxes}
</fieldset>
<button type="submit">Create webhook</button>
</form>
</section>`;
}

function webhookRow(webhook: WebhookView, csrfToken: string): string {
  return `<tr>
<td>${escapeHtml(webhook.url)}</td>
<td>${escapeHtml(webhook.events.join(' '))}</td>
<td>${when(webhook.created_at)}</td>
<td><code>${escapeHtml(webhook.id)}</code></td>
<td><form class="inline" method="post" action="${escapeHtml(ADMIN_PATHS.deleteWebhook(webhook.id))}">
${csrfField(csrfToken)}
<button type="submit" class="danger" aria-label="Delete ${escapeHtml(webhook.url)}">Delete</button>
</form></td>
</tr>`;
}

function deliveryRow(delivery: OutboxEntry, csrfToken: string): string {
  const resend =
    delivery.state === 'sent'
      ? ''
      : `<form class="inline" method="post" action="${escapeHtml(ADMIN_PATHS.resendDelivery(delivery.id))}">
${csrfField(csrfToken)}
<button type="submit" aria-label="Send ${escapeHtml(delivery.id)} again">Send again</button>
</form>`;
  return `<tr>
<td>${when(delivery.created_at)}</td>
<td>${escapeHtml(delivery.template)}</td>
<td>${escapeHtml(delivery.state)}</td>
<td>${delivery.attempts}</td>
<td>${escapeHtml(delivery.last_error ?? '')}</td>
<td><code>${escapeHtml(delivery.id)}</code></td>
<td>${resend}</td>
</tr>`;
}

/** The console's webhooks (docs/admin.md): the list, the create form, the delivery log. */
export function webhooksPage(input: WebhooksPageInput): string {
  const table = input.webhooks.length
    ? `<table class="webhooks">
<thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Created</th><th scope="col">Id</th><th scope="col"></th></tr></thead>
<tbody>
${input.webhooks.map((webhook) => webhookRow(webhook, input.csrfToken)).join('\n')}
</tbody>
</table>`
    : '<p class="muted">No webhooks.</p>';
  const log = input.deliveries.length
    ? `<table class="deliveries">
<thead><tr><th scope="col">Queued</th><th scope="col">Event</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col">Last error</th><th scope="col">webhook-id</th><th scope="col"></th></tr></thead>
<tbody>
${input.deliveries.map((delivery) => deliveryRow(delivery, input.csrfToken)).join('\n')}
</tbody>
</table>`
    : '<p class="muted">No deliveries.</p>';
  return consolePage(
    input.operator,
    'webhooks',
    'Webhooks',
    `${notices({ notice: input.notice, error: input.error })}${input.created ? createdSecret(input.created) : ''}
${table}
${createForm(input)}
<section aria-labelledby="log-heading">
<h2 id="log-heading">Delivery log</h2>
${log}
</section>`,
  );
}
