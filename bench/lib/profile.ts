import { readFileSync } from 'node:fs';

/** The parts of V8's .cpuprofile format (written by `node --cpu-prof`) used here. */
interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileEntry {
  name: string;
  /** Share of non-idle samples, 0-1. */
  share: number;
}

export interface ProfileSummary {
  file: string;
  /** Non-idle sampled time, milliseconds. */
  busyMs: number;
  idleShare: number;
  /** Self time by function. */
  topFunctions: ProfileEntry[];
  /** Self time by where the code lives (package, node internals, Tessera file, GC). */
  selfByArea: ProfileEntry[];
  /** Time in stacks that pass through the area at least once. */
  inclusiveByArea: ProfileEntry[];
}

/** node_modules/<pkg> (scoped too), a Tessera source file, node internals, or a VM bucket. */
export function areaOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (modules) return modules[1]!;
  const own = /\/(?:dist|src)\/(.+?)\.[jt]s$/.exec(url);
  if (own && !url.includes('node_modules')) return `tessera:${own[1]}`;
  if (url.startsWith('node:')) return 'node:internal';
  return url.replace(/^file:\/\/.*\//, '');
}

/** A short location for a function: package-relative or Tessera-relative file path. */
function where(url: string, area: string): string {
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+\/.+)$/.exec(url);
  if (modules) return modules[1]!.replace(/\/(?:dist|lib)\//, '/');
  const own = /\/(?:dist|src)\/(.+)$/.exec(url);
  if (own) return own[1]!;
  return url.startsWith('node:') ? url : area;
}

function top(map: Map<string, number>, total: number, count: number): ProfileEntry[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, value]) => ({ name, share: value / total }));
}

export function summarizeProfile(file: string, count = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const selfTime = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });

  let idle = 0;
  let busy = 0;
  const functions = new Map<string, number>();
  const selfAreas = new Map<string, number>();
  const inclusiveAreas = new Map<string, number>();
  for (const [id, micros] of selfTime) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') {
      idle += micros;
      continue;
    }
    busy += micros;
    const area = areaOf(url, functionName);
    const label = `${functionName || '(anonymous)'} ${where(url, area)}${url ? `:${lineNumber + 1}` : ''}`;
    functions.set(label, (functions.get(label) ?? 0) + micros);
    selfAreas.set(area, (selfAreas.get(area) ?? 0) + micros);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (frame.functionName === '(root)') break;
      seen.add(areaOf(frame.url, frame.functionName));
    }
    for (const name of seen) inclusiveAreas.set(name, (inclusiveAreas.get(name) ?? 0) + micros);
  }
  const total = Math.max(1, busy);
  return {
    file,
    busyMs: busy / 1000,
    idleShare: idle / Math.max(1, idle + busy),
    topFunctions: top(functions, total, count),
    selfByArea: top(selfAreas, total, count),
    inclusiveByArea: top(inclusiveAreas, total, count),
  };
}
