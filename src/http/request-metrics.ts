import type { Metric } from 'prom-client';

/** Upper bounds of the answer-time histogram, seconds. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

type Labels = Record<string, string | number>;

/** One line of the exposition, as prom-client's registry reads it from `get()`. */
interface Line {
  metricName?: string;
  labels: Labels;
  value: number;
}

interface Counted {
  labels: Labels;
  count: number;
}

interface Timed {
  labels: Labels;
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  buckets: number[];
  sum: number;
  count: number;
}

/**
 * Requests answered and time to answer, by route: the two series families of
 * `tessera_http_*`, kept in plain numbers and handed to prom-client's registry as metric
 * objects (`get()`), so the registry formats them at scrape time. prom-client's own labelled
 * metrics validate and hash their label object on every observation, which cost the
 * session check more than its identity lookup.
 */
export class RequestMetrics {
  readonly #answered = new Map<string, Counted>();
  readonly #timings = new Map<string, Timed>();

  record(route: string, method: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let counted = this.#answered.get(key);
    if (!counted) {
      counted = { labels: { route, method, status: String(status) }, count: 0 };
      this.#answered.set(key, counted);
    }
    counted.count += 1;

    let timed = this.#timings.get(route);
    if (!timed) {
      timed = {
        labels: { route },
        buckets: new Array(BUCKETS.length + 1).fill(0),
        sum: 0,
        count: 0,
      };
      this.#timings.set(route, timed);
    }
    let bucket = 0;
    while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]!) bucket++;
    timed.buckets[bucket]! += 1;
    timed.sum += seconds;
    timed.count += 1;
  }

  /** The metric objects for `Registry.registerMetric`. */
  metrics(): Metric[] {
    const answered = this.#answered;
    const timings = this.#timings;
    const requests = {
      name: 'tessera_http_requests_total',
      help: 'HTTP requests answered, by route, method and status',
      type: 'counter',
      aggregator: 'sum',
      get: () => ({
        name: requests.name,
        help: requests.help,
        type: requests.type,
        aggregator: requests.aggregator,
        values: [...answered.values()].map(({ labels, count }): Line => ({ labels, value: count })),
      }),
    };
    const duration = {
      name: 'tessera_http_request_duration_seconds',
      help: 'Time to answer, by route',
      type: 'histogram',
      aggregator: 'sum',
      get: () => ({
        name: duration.name,
        help: duration.help,
        type: duration.type,
        aggregator: duration.aggregator,
        values: [...timings.values()].flatMap((timed) => histogramValues(duration.name, timed)),
      }),
    };
    // The registry reads only name, help, type, aggregator and get() of a metric.
    return [requests, duration] as unknown as Metric[];
  }
}

function histogramValues(name: string, timed: Timed): Line[] {
  const values: Line[] = [];
  let cumulative = 0;
  for (let i = 0; i <= BUCKETS.length; i++) {
    cumulative += timed.buckets[i]!;
    values.push({
      metricName: `${name}_bucket`,
      labels: { ...timed.labels, le: i < BUCKETS.length ? BUCKETS[i]! : '+Inf' },
      value: cumulative,
    });
  }
  values.push({ metricName: `${name}_sum`, labels: timed.labels, value: timed.sum });
  values.push({ metricName: `${name}_count`, labels: timed.labels, value: timed.count });
  return values;
}
