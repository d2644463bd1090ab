import { escapeHtml } from '../login-page/render.js';

const WIDTH = 720;
const HEIGHT = 160;
/** Room above the bars for the scale's label. */
const TOP = 16;

export interface Bar {
  /** Said by the bar's tooltip and by nothing else: `2026-11-26 10:00 UTC`. */
  label: string;
  /** Stacked bottom up, each drawn with its series' class. */
  values: number[];
}

export interface ChartInput {
  id: string;
  title: string;
  /** One per value of a bar: its class (colour) and name. */
  series: { className: string; name: string }[];
  bars: Bar[];
}

function total(bar: Bar): number {
  return bar.values.reduce((sum, value) => sum + value, 0);
}

/**
 * A bar chart as inline SVG, drawn here from counts: no script, no chart library, no
 * request of its own, allowed by the pages' CSP as it is part of the document. Colours come
 * from the stylesheet's classes (dark mode included). Screen readers get the title and a
 * one-sentence summary (`role="img"`); each bar's `<title>` is its tooltip.
 */
export function barChart(input: ChartInput): string {
  const max = Math.max(1, ...input.bars.map(total));
  const step = WIDTH / Math.max(1, input.bars.length);
  const gap = step > 4 ? 1 : 0;
  const scale = (HEIGHT - TOP) / max;
  const rects = input.bars
    .map((bar, i) => {
      let y = HEIGHT;
      const parts = bar.values
        .map((value, s) => {
          if (value === 0) return '';
          const height = value * scale;
          y -= height;
          return `<rect class="${input.series[s]!.className}" x="${(i * step).toFixed(2)}" y="${y.toFixed(2)}" width="${(step - gap).toFixed(2)}" height="${height.toFixed(2)}"/>`;
        })
        .join('');
      const says = bar.values.map((value, s) => `${value} ${input.series[s]!.name}`).join(', ');
      return `<g><title>${escapeHtml(`${bar.label}: ${says}`)}</title>${parts}</g>`;
    })
    .join('\n');
  const sums = input.series.map(
    (series, s) => `${input.bars.reduce((sum, bar) => sum + bar.values[s]!, 0)} ${series.name}`,
  );
  const legend = input.series
    .map((series) => `<span class="swatch ${series.className}"></span>${escapeHtml(series.name)}`)
    .join(' ');
  return `<figure class="chart" id="${input.id}">
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${input.id}-title ${input.id}-desc">
<title id="${input.id}-title">${escapeHtml(input.title)}</title>
<desc id="${input.id}-desc">${escapeHtml(`In all: ${sums.join(', ')}; at most ${max === 1 && input.bars.every((bar) => total(bar) === 0) ? 0 : max} in one bar.`)}</desc>
<line class="axis" x1="0" y1="${HEIGHT - 0.5}" x2="${WIDTH}" y2="${HEIGHT - 0.5}"/>
<line class="axis" x1="0" y1="${TOP}" x2="${WIDTH}" y2="${TOP}"/>
<text x="2" y="${TOP - 4}">${max}</text>
${rects}
</svg>
<figcaption>${escapeHtml(input.title)} · ${legend} · ${escapeHtml(sums.join(', '))}</figcaption>
</figure>`;
}
