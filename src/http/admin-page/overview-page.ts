import type { Overview, SignInSeries } from '../../domain/admin/overview.js';
import type { Identity } from '../../domain/identities/identity.js';
import { toIso } from '../../lib/clock.js';
import { escapeHtml } from '../login-page/render.js';
import { barChart } from './charts.js';
import { consolePage } from './render.js';

const SIGN_IN_SERIES = [
  { className: 'ok', name: 'succeeded' },
  { className: 'failed', name: 'failed' },
];

/** `2026-11-26 10:00 UTC`. */
function hourLabel(start: number): string {
  const iso = toIso(start);
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

function methodTable(id: string, series: SignInSeries): string {
  if (series.byMethod.length === 0) return '<p class="muted">No sign-ins.</p>';
  const rows = series.byMethod
    .map(
      (row) =>
        `<tr><th scope="row">${escapeHtml(row.method)}</th><td>${row.ok}</td><td>${row.failed}</td></tr>`,
    )
    .join('\n');
  return `<table id="${id}">
<caption class="muted">By method</caption>
<thead><tr><th scope="col">Method</th><th scope="col">Succeeded</th><th scope="col">Failed</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`;
}

function signInSection(id: string, title: string, series: SignInSeries): string {
  const chart = barChart({
    id: `${id}-chart`,
    title: `${title}, per hour`,
    series: SIGN_IN_SERIES,
    bars: series.buckets.map((bucket) => ({
      label: hourLabel(bucket.start),
      values: [bucket.ok, bucket.failed],
    })),
  });
  return `<section aria-labelledby="${id}-heading">
<h2 id="${id}-heading">${escapeHtml(title)}</h2>
${chart}
${methodTable(`${id}-methods`, series)}
</section>`;
}

/** `GET /v1/admin`: the overview, drawn on the server. */
export function overviewPage(operator: Identity, overview: Overview): string {
  const identities = barChart({
    id: 'new-identities-chart',
    title: 'New identities per day, last 30 days',
    series: [{ className: 'ok', name: 'new identities' }],
    bars: overview.newIdentities.map((day) => ({
      label: toIso(day.start).slice(0, 10),
      values: [day.count],
    })),
  });
  return consolePage(
    operator,
    'home',
    'Overview',
    `<p class="muted">As of ${escapeHtml(hourLabel(overview.at))}.</p>
<p id="live-sessions"><strong>${overview.liveSessions}</strong> active session(s).</p>
${signInSection('sign-ins-24h', 'Sign-ins, last 24 hours', overview.signIns24h)}
${signInSection('sign-ins-7d', 'Sign-ins, last 7 days', overview.signIns7d)}
<section aria-labelledby="identities-heading">
<h2 id="identities-heading">New identities</h2>
${identities}
</section>`,
  );
}
