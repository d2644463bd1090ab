import type { Metric } from 'prom-client';
import type { OutboxCounters } from '../domain/outbox/outbox-worker.js';
import type { OutboxStore } from '../domain/outbox/outbox.js';

/**
 * The outbox on /metrics: how many rows wait and how many failed for good, read from the
 * database at scrape time (so every instance reports the same, shared queue), and what this
 * process's worker sent, retried and gave up on since it started.
 */
export function outboxMetrics(store: OutboxStore, counters: OutboxCounters): Metric[] {
  // A scrape during a database outage still answers, without the two gauges' values.
  const read = (state: 'pending' | 'failed') =>
    store.countOutboxRecords().then(
      (counts) => [{ labels: {}, value: counts[state] }],
      () => [],
    );
  const gauge = (name: string, help: string, state: 'pending' | 'failed') => ({
    name,
    help,
    type: 'gauge',
    aggregator: 'first',
    get: async () => ({
      name,
      help,
      type: 'gauge',
      aggregator: 'first',
      values: await read(state),
    }),
  });
  const counter = (name: string, help: string, outcome: 'sent' | 'failed' | 'retried') => ({
    name,
    help,
    type: 'counter',
    aggregator: 'sum',
    get: () => ({
      name,
      help,
      type: 'counter',
      aggregator: 'sum',
      values: [...counters[outcome]].map(([kind, value]) => ({ labels: { kind }, value })),
    }),
  });
  // The registry reads only name, help, type, aggregator and get() of a metric.
  return [
    gauge(
      'tessera_outbox_pending',
      'Outbox rows waiting to be delivered (all instances)',
      'pending',
    ),
    gauge(
      'tessera_outbox_failed',
      'Outbox rows given up on: `tessera mail list --state failed`',
      'failed',
    ),
    counter('tessera_outbox_sent_total', 'Deliveries accepted, by this process, by kind', 'sent'),
    counter(
      'tessera_outbox_failed_total',
      'Deliveries given up on, by this process, by kind',
      'failed',
    ),
    counter(
      'tessera_outbox_retried_total',
      'Temporary failures to be retried, by this process, by kind',
      'retried',
    ),
  ] as unknown as Metric[];
}
