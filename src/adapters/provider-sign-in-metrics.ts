import type { Metric } from 'prom-client';

/**
 * Provider sign-ins on /metrics: this process's callbacks by provider and outcome (`ok`,
 * `second_factor_required`, or the refusal's error code), since it started.
 */
export class ProviderSignInCounters {
  private readonly counts = new Map<string, { provider: string; outcome: string; value: number }>();

  record(provider: string, outcome: string): void {
    const key = `${provider}\u0000${outcome}`;
    const entry = this.counts.get(key);
    if (entry) entry.value += 1;
    else this.counts.set(key, { provider, outcome, value: 1 });
  }

  metrics(): Metric[] {
    const name = 'tessera_provider_sign_ins_total';
    const help = 'Upstream provider callbacks answered by this process, by provider and outcome';
    const values = () =>
      [...this.counts.values()].map(({ provider, outcome, value }) => ({
        labels: { provider, outcome },
        value,
      }));
    // The registry reads only name, help, type, aggregator and get() of a metric.
    return [
      {
        name,
        help,
        type: 'counter',
        aggregator: 'sum',
        get: () => ({ name, help, type: 'counter', aggregator: 'sum', values: values() }),
      } as unknown as Metric,
    ];
  }
}
