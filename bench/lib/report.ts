import type { CourierResult } from './courier.js';
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
  /** Of which the main thread (the event loop), microseconds per operation. */
  mainThreadUsPerOp: number;
  /** CPU of the PostgreSQL backends serving the measured server, µs per operation. */
  databaseUsPerOp?: number;
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
  /** The floor server, or for login the argon2-only bound, or the bare oidc-provider. */
  reference?: Side & { kind: 'floor' | 'argon2' | 'login' | 'oidc-floor' };
  /**
   * Median pair ratio service / reference per second; for the OIDC scenarios, by CPU: the
   * reference's CPU per operation over the service's.
   */
  ratio?: number;
  /**
   * Against the floor (whoami, verify, identity, link): the median pair ratio by CPU, the
   * floor's CPU per request over the service's, which issue 27's session-check targets use.
   */
  cpuRatio?: number;
  /**
   * Password sign-ins only (login, password): the floor's own (bench/floor.ts) in the same pairs, with the median
   * pair ratios floor / argon2 bound and service / floor.
   */
  loginFloor?: Side & { toBound: number; serviceToFloor: number };
  targets: Target[];
  profile?: ProfileSummary;
  /** The reference's (floor or bare oidc-provider's) profile, taken the same way. */
  referenceProfile?: ProfileSummary;
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
  courier: CourierResult[];
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
  password: 'sign-ins/s',
  link: 'sign-ins/s',
  signup: 'sign-ups/s',
  'oidc-code': 'exchanges/s',
  'oidc-refresh': 'refreshes/s',
  'oidc-userinfo': 'req/s',
};

const DESCRIPTION: Record<ScenarioName, string> = {
  whoami: '`GET /v1/whoami`, cookie',
  verify: '`POST /v1/sessions/verify`, bearer',
  identity: '`GET /v1/identities/{id}`',
  login: '`GET /v1/login` + `POST /v1/flows/{id}/password`',
  password: '`POST /v1/authenticate/password`, bearer (direct sign-in)',
  link: '`POST /v1/authenticate/link`, returning user',
  signup: '`GET /v1/registration` + `POST /v1/registration/{id}/password`, a new identity each',
  'oidc-code': '`POST <issuer>/token`, authorization_code (PKCE, `client_secret_basic`)',
  'oidc-refresh': '`POST <issuer>/token`, refresh_token (rotated)',
  'oidc-userinfo': '`GET <issuer>/me`, bearer access token',
};

/** What the floor's sign-in beside a password scenario does (bench/floor.ts). */
const FLOOR_SIGN_IN: Partial<Record<ScenarioName, string>> = {
  login:
    "Login floor (`bench/floor.ts`: the same two requests on bare Fastify routes, a flow row, one argon2 verification and a session row, without Tessera's limits, audit, headers or schemas)",
  password:
    "Direct floor (`bench/floor.ts`: the same POST on a bare Fastify route, the bearer service token read as verify's floor does, the identity by username, one argon2 verification and a session row, without Tessera's limits, audit, headers or schemas)",
};

function problems(side: Side | undefined): string {
  if (!side) return '';
  const parts = Object.entries(side.unexpected).map(([status, n]) => `${n}× ${status}`);
  if (side.errors) parts.push(`${side.errors} errors`);
  if (side.timeouts) parts.push(`${side.timeouts} timeouts`);
  return parts.join(', ');
}

/** Start, after one sign-in, and peak (VmHWM), MiB; what was not measured is left out. */
function rssFigures(memory: MemorySample | undefined): string {
  if (!memory) return '';
  const marks = [memory.startMb, memory.afterSignInMb].map((mb) => fmt(mb, 0));
  return `${marks.join(' / ')} / ${fmt(memory.hwmMb, 0)}`;
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
    '| database | scenario | conns | service | p50 ms | p99 ms | CPU µs/op | RSS MB: start / signed in / peak | reference | ref p99 ms | ref CPU µs/op | ref RSS MB | ratio | targets |',
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
        : reference?.kind === 'login'
          ? `${fmt(reference.opsPerSec, 1)} password logins/s (same service)`
          : reference?.kind === 'oidc-floor'
            ? `${fmt(reference.opsPerSec)} bare oidc-provider ${UNIT[result.scenario]}`
            : reference
              ? `${fmt(reference.opsPerSec)} floor req/s`
              : '–';
    const digits = ['login', 'password', 'signup'].includes(result.scenario) ? 1 : 0;
    const issue = [problems(service), reference ? problems(reference) : '']
      .filter(Boolean)
      .join('; ');
    const targets = result.targets
      .map((target) => `${target.pass ? '✅' : '❌'} ${target.text}`)
      .join('<br>');
    lines.push(
      `| ${result.db} | ${name} | ${result.connections ?? ''} | ${fmt(service.opsPerSec, digits)} ${UNIT[result.scenario]} | ${ms(service.p50)} | ${ms(service.p99)} | ${fmt(service.cpuUsPerOp)} (main ${fmt(service.mainThreadUsPerOp)}${service.databaseUsPerOp === undefined ? '' : `; PostgreSQL ${fmt(service.databaseUsPerOp)}`}) | ${rssFigures(service.memory)} | ${refName} | ${reference?.kind === 'floor' || reference?.kind === 'oidc-floor' ? ms(reference.p99) : '–'} | ${fmt(reference?.cpuUsPerOp)} | ${fmt(reference?.memory?.hwmMb)} | ${result.ratio === undefined ? '–' : `${fmt(result.ratio, 2)}${reference?.kind === 'oidc-floor' ? ' (CPU)' : ''}`}${result.cpuRatio === undefined ? '' : `<br>CPU ${fmt(result.cpuRatio, 2)}`} | ${targets}${issue ? `<br>⚠️ ${issue}` : ''} |`,
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
  for (const result of report.results) {
    const floor = result.loginFloor;
    if (!floor) continue;
    const issue = problems(floor);
    lines.push(
      `${FLOOR_SIGN_IN[result.scenario] ?? ''}, ${result.db} (in the same pairs): ${fmt(floor.opsPerSec, 1)} ${UNIT[result.scenario]}, ${fmt(floor.cpuUsPerOp)} µs CPU per sign-in (main ${fmt(floor.mainThreadUsPerOp)}), p99 ${ms(floor.p99)} ms, per pair ${floor.rounds.map((value) => fmt(value, 1)).join(' · ')}. **Floor / argon2 bound ${fmt(floor.toBound, 2)}** (the most such a sign-in over HTTP can reach on this machine, load generator included); **service / floor ${fmt(floor.serviceToFloor, 2)}**.${issue ? ` ⚠️ ${issue}` : ''}`,
      '',
    );
  }
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
  if (report.courier.length > 0) {
    lines.push('## The courier (mail)', '');
    lines.push(
      'Mails queued in the outbox before the service starts, sent over SMTP to a local `smtp-server` that accepts each; from the service’s readiness to the last one accepted (bench/lib/courier.ts).',
      '',
      '| database | mails | seconds | mails/s | service CPU µs/mail |',
      '|---|--:|--:|--:|--:|',
    );
    for (const row of report.courier) {
      lines.push(
        `| ${row.db} | ${fmt(row.mails)} | ${fmt(row.seconds, 1)} | ${fmt(row.mailsPerSec)} | ${fmt(row.cpuUsPerMail)} |`,
      );
    }
    lines.push('');
  }
  const profiled = report.results.filter((result) => result.profile);
  if (profiled.length > 0) {
    lines.push('## CPU profiles of the service and its reference', '');
    lines.push(
      'Taken with `node --cpu-prof` over the life of the service process and of its floor (or bare oidc-provider), main thread only (the profiler itself slows the service down; figures in a profiled run are not the reference figures). Shares are of the sampled non-idle time. Self time is where the thread was; "inclusive" counts every sample whose stack passes through the area, and since Fastify runs each hook from inside the previous one, hook plugins (cookie, CORS) appear to include the whole rest of the request.',
      '',
    );
    for (const result of profiled) {
      lines.push(...profileTable(`${result.db} ${result.scenario}`, result.profile!));
      if (result.referenceProfile) {
        lines.push(...profileTable(`its reference, the same run`, result.referenceProfile));
      }
    }
  }
  if (report.notes.length > 0) {
    lines.push('## Notes', '');
    for (const note of report.notes) lines.push(`- ${note}`);
    lines.push('');
  }
  return lines.join('\n');
}

/** One profile's table for the report: top functions by self time, areas by both. */
function profileTable(title: string, profile: ProfileSummary): string[] {
  const lines = [
    `### ${title} (${profile.file.replace(/^.*\/bench\//, 'bench/')})`,
    '',
    `Busy ${fmt(profile.busyMs)} ms sampled, idle ${fmt(profile.idleShare * 100, 1)}% of the process's time.`,
    '',
    '| self time | function | | inclusive | area | | self | area |',
    '|--:|---|---|--:|---|---|--:|---|',
  ];
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
  return lines;
}
