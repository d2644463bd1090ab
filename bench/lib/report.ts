import type { ScenarioName } from './load.js';
import type { MemorySample } from './processes.js';
import type { ProfileSummary } from './profile.js';

/** One side of an A/B comparison, merged over its rounds. */
export interface Side {
  /** Scenario operations per second over all rounds (total ops / total time). */
  opsPerSec: number;
  /** Per-round operations per second, in order. */
  rounds: number[];
  /** Per-round share of CPU time stolen by the hypervisor (0-1), in order. */
  steal: number[];
  /** Mean of the rounds' medians, milliseconds. */
  p50: number;
  /** Worst round's 99th percentile, milliseconds. */
  p99: number;
  unexpected: Record<string, number>;
  errors: number;
  timeouts: number;
  /** Server CPU time (user + system, all threads) per operation, microseconds. */
  cpuUsPerOp: number;
  memory?: MemorySample;
}

export interface Target {
  text: string;
  pass: boolean;
}

export interface ScenarioResult {
  db: string;
  scenario: ScenarioName;
  status: 'ok' | 'unavailable' | 'failed';
  note?: string;
  connections?: number;
  service?: Side;
  /** The floor server, or for login the argon2-only bound. */
  reference?: Side & { kind: 'floor' | 'argon2' };
  ratio?: number;
  targets: Target[];
  profile?: ProfileSummary;
}

export interface LargeComparison {
  db: string;
  small: ScenarioResult;
  large: ScenarioResult;
  /** large service req/s / small service req/s. */
  ratio: number;
  target: Target;
}

export interface BenchReport {
  startedAt: string;
  finishedAt: string;
  machine: {
    cpus: number;
    cpuModel: string;
    node: string;
    memoryGb: number;
    kernel: string;
    /** 1-minute load average when the run started and when it ended (other work on the machine). */
    loadAverage: [number, number];
  };
  command: string;
  settings: Record<string, string | number | boolean>;
  results: ScenarioResult[];
  large: LargeComparison[];
  notes: string[];
}

const fmt = (value: number | undefined, digits = 0) =>
  value === undefined || Number.isNaN(value)
    ? '–'
    : value.toLocaleString('en-US', {
        minimumFractionDigits: digits,
        maximumFractionDigits: digits,
      });

const ms = (value: number | undefined) => fmt(value, value !== undefined && value < 10 ? 2 : 1);

const UNIT: Record<ScenarioName, string> = {
  whoami: 'req/s',
  verify: 'req/s',
  identity: 'req/s',
  login: 'logins/s',
  link: 'sign-ins/s',
};

const DESCRIPTION: Record<ScenarioName, string> = {
  whoami: '`GET /v1/whoami`, cookie',
  verify: '`POST /v1/sessions/verify`, bearer',
  identity: '`GET /v1/identities/{id}`',
  login: '`GET /v1/login` + `POST /v1/flows/{id}/password`',
  link: '`POST /v1/authenticate/link`, returning user',
};

function problems(side: Side | undefined): string {
  if (!side) return '';
  const parts = Object.entries(side.unexpected).map(([status, n]) => `${n}× ${status}`);
  if (side.errors) parts.push(`${side.errors} errors`);
  if (side.timeouts) parts.push(`${side.timeouts} timeouts`);
  return parts.join(', ');
}

export function markdown(report: BenchReport): string {
  const lines: string[] = [];
  const { machine } = report;
  lines.push(`# Tessera bench: ${report.startedAt.slice(0, 16).replace('T', ' ')} UTC`, '');
  lines.push(
    `Machine: ${machine.cpus} CPU cores (\`nproc\`), ${machine.cpuModel}, ${machine.memoryGb} GB RAM, Node ${machine.node}, Linux ${machine.kernel}; 1-minute load average ${machine.loadAverage[0].toFixed(2)} at the start, ${machine.loadAverage[1].toFixed(2)} at the end.`,
    '',
    `Command: \`${report.command}\``,
    '',
    `Settings: ${Object.entries(report.settings)
      .map(([key, value]) => `${key} ${value}`)
      .join(', ')}.`,
    '',
  );
  lines.push(
    '| database | scenario | conns | service | p50 ms | p99 ms | CPU µs/op | peak RSS MB | reference | ref p99 ms | ref CPU µs/op | ref RSS MB | ratio | targets |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|',
  );
  for (const result of report.results) {
    const name = `${result.scenario}: ${DESCRIPTION[result.scenario]}`;
    if (result.status !== 'ok') {
      lines.push(
        `| ${result.db} | ${name} | | ${result.status}: ${result.note ?? ''} | | | | | | | | | | |`,
      );
      continue;
    }
    const service = result.service!;
    const reference = result.reference;
    const refName =
      reference?.kind === 'argon2'
        ? `${fmt(reference.opsPerSec, 1)} argon2 verifications/s`
        : reference
          ? `${fmt(reference.opsPerSec)} floor req/s`
          : '–';
    const digits = result.scenario === 'login' ? 1 : 0;
    const issue = [problems(service), reference ? problems(reference) : '']
      .filter(Boolean)
      .join('; ');
    const targets = result.targets
      .map((target) => `${target.pass ? '✅' : '❌'} ${target.text}`)
      .join('<br>');
    lines.push(
      `| ${result.db} | ${name} | ${result.connections ?? ''} | ${fmt(service.opsPerSec, digits)} ${UNIT[result.scenario]} | ${ms(service.p50)} | ${ms(service.p99)} | ${fmt(service.cpuUsPerOp)} | ${fmt(service.memory?.hwmMb, 0)} | ${refName} | ${reference?.kind === 'floor' ? ms(reference.p99) : '–'} | ${fmt(reference?.cpuUsPerOp)} | ${fmt(reference?.memory?.hwmMb)} | ${result.ratio === undefined ? '–' : fmt(result.ratio, 2)} | ${targets}${issue ? `<br>⚠️ ${issue}` : ''} |`,
    );
  }
  lines.push('');
  lines.push(
    "Per-pair figures (service / reference per second; pairs run A B, then B A, alternately; steal is the share of the machine's CPU time the hypervisor gave to other guests during each round, which slows that round down):",
    '',
  );
  for (const result of report.results) {
    if (result.status !== 'ok') continue;
    const percent = (share: number | undefined) =>
      share === undefined || Number.isNaN(share) ? '–' : `${Math.round(share * 100)}%`;
    const rounds = result.service!.rounds.map((value, i) => {
      const ref = result.reference?.rounds[i];
      const steal = `steal ${percent(result.service!.steal[i])} / ${percent(result.reference?.steal[i])}`;
      return `${fmt(value, 1)} / ${ref === undefined ? '–' : fmt(ref, 1)} (${steal})`;
    });
    lines.push(`- ${result.db} ${result.scenario}: ${rounds.join(' · ')}`);
  }
  lines.push('');
  if (report.large.length > 0) {
    lines.push('## Large database (1M identities, 5M sessions) vs small', '');
    lines.push(
      '| database | small DB service req/s | large DB service req/s | large/small | small floor | large floor | large p99 ms | large peak RSS MB | target |',
      '|---|--:|--:|--:|--:|--:|--:|--:|---|',
    );
    for (const row of report.large) {
      lines.push(
        `| ${row.db} | ${fmt(row.small.service?.opsPerSec)} | ${fmt(row.large.service?.opsPerSec)} | ${fmt(row.ratio, 3)} | ${fmt(row.small.reference?.opsPerSec)} | ${fmt(row.large.reference?.opsPerSec)} | ${ms(row.large.service?.p99)} | ${fmt(row.large.service?.memory?.hwmMb)} | ${row.target.pass ? '✅' : '❌'} ${row.target.text} |`,
      );
    }
    lines.push('');
  }
  const profiled = report.results.filter((result) => result.profile);
  if (profiled.length > 0) {
    lines.push('## CPU profiles of the service', '');
    lines.push(
      'Taken with `node --cpu-prof` over the service process\'s life, main thread only (the profiler itself slows the service down; figures in a profiled run are not the reference figures). Shares are of the sampled non-idle time. Self time is where the thread was; "inclusive" counts every sample whose stack passes through the area, and since Fastify runs each hook from inside the previous one, hook plugins (cookie, CORS) appear to include the whole rest of the request.',
      '',
    );
    for (const result of profiled) {
      const profile = result.profile!;
      lines.push(
        `### ${result.db} ${result.scenario} (${profile.file.replace(/^.*\/bench\//, 'bench/')})`,
        '',
        `Busy ${fmt(profile.busyMs)} ms sampled, idle ${fmt(profile.idleShare * 100, 1)}% of the process's time.`,
        '',
        '| self time | function | | inclusive | area | | self | area |',
        '|--:|---|---|--:|---|---|--:|---|',
      );
      const rows = Math.max(
        profile.topFunctions.length,
        profile.inclusiveByArea.length,
        profile.selfByArea.length,
      );
      for (let i = 0; i < rows; i++) {
        const f = profile.topFunctions[i];
        const inc = profile.inclusiveByArea[i];
        const self = profile.selfByArea[i];
        lines.push(
          `| ${f ? `${fmt(f.share * 100, 1)}%` : ''} | ${f ? `\`${f.name}\`` : ''} | | ${inc ? `${fmt(inc.share * 100, 1)}%` : ''} | ${inc?.name ?? ''} | | ${self ? `${fmt(self.share * 100, 1)}%` : ''} | ${self?.name ?? ''} |`,
        );
      }
      lines.push('');
    }
  }
  if (report.notes.length > 0) {
    lines.push('## Notes', '');
    for (const note of report.notes) lines.push(`- ${note}`);
    lines.push('');
  }
  return lines.join('\n');
}

const escape = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** A hand-written bar chart: each scenario's throughput as a share of its reference. */
export function svg(report: BenchReport): string {
  const rows = report.results.filter((result) => result.status === 'ok' && result.ratio);
  const largeRows = report.large;
  const rowHeight = 34;
  const left = 230;
  const barWidth = 520;
  const top = 58;
  const height = top + (rows.length + largeRows.length) * rowHeight + 60;
  const width = left + barWidth + 470;
  const maxRatio = 1.2;
  const x = (ratio: number) => left + (Math.min(ratio, maxRatio) / maxRatio) * barWidth;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="16" y="24" font-size="15" font-weight="600">Tessera: throughput as a share of its reference (floor server, or argon2 bound for login)</text>`,
    `<text x="16" y="42" fill="#555">${escape(`${report.machine.cpus} cores, Node ${report.machine.node}, ${report.startedAt.slice(0, 10)}; bar = service / reference; tick = target; label = service and reference per second`)}</text>`,
  );
  for (const tick of [0, 0.25, 0.5, 0.75, 1]) {
    out.push(
      `<line x1="${x(tick)}" y1="${top - 6}" x2="${x(tick)}" y2="${height - 50}" stroke="#e3e3e3"/>`,
      `<text x="${x(tick)}" y="${height - 36}" text-anchor="middle" fill="#555">${tick.toFixed(2)}</text>`,
    );
  }
  const bar = (
    y: number,
    label: string,
    ratio: number,
    target: number | undefined,
    pass: boolean,
    detail: string,
  ) => {
    const color = pass ? '#2e7d32' : '#c62828';
    out.push(
      `<text x="${left - 10}" y="${y + 15}" text-anchor="end">${escape(label)}</text>`,
      `<rect x="${left}" y="${y + 3}" width="${Math.max(1, x(ratio) - left)}" height="18" fill="${color}" opacity="0.8"/>`,
      `<text x="${x(ratio) + 6}" y="${y + 16}" font-weight="600">${ratio.toFixed(2)}</text>`,
      `<text x="${left + barWidth + 40}" y="${y + 16}" fill="#333">${escape(detail)}</text>`,
    );
    if (target !== undefined) {
      out.push(
        `<line x1="${x(target)}" y1="${y}" x2="${x(target)}" y2="${y + 24}" stroke="#000" stroke-width="2"/>`,
      );
    }
  };
  rows.forEach((result, i) => {
    const target = result.targets.find((t) => t.text.includes('≥'));
    const targetValue = target ? Number(/≥ ([0-9.]+)/.exec(target.text)?.[1]) : undefined;
    const unit = result.scenario === 'login' ? '/s' : ' req/s';
    const detail = `${fmt(result.service!.opsPerSec, result.scenario === 'login' ? 1 : 0)} vs ${fmt(result.reference!.opsPerSec, result.scenario === 'login' ? 1 : 0)}${unit}, p99 ${ms(result.service!.p99)} ms, RSS ${fmt(result.service!.memory?.hwmMb)} MB`;
    bar(
      top + i * rowHeight,
      `${result.db} · ${result.scenario}`,
      result.ratio!,
      targetValue,
      result.targets.every((t) => t.pass),
      detail,
    );
  });
  largeRows.forEach((row, i) => {
    bar(
      top + (rows.length + i) * rowHeight,
      `${row.db} · whoami large/small`,
      row.ratio,
      0.9,
      row.target.pass,
      `${fmt(row.large.service?.opsPerSec)} vs ${fmt(row.small.service?.opsPerSec)} req/s`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
