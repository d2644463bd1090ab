import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `dist/cli/main.js` of this run's build of src/ (see test/helpers/cli.ts). */
    tesseraCli: string;
  }
}

const ROOT = join(import.meta.dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * The suite spawns the CLI and `tessera serve` hundreds of times. Under `--import tsx` each
 * process spends most of its start-up in the loader hooks, so the suite transpiles src/ once,
 * file by file like `npm run build` (same modules, same lazy imports), into a package laid out
 * as installed: inside node_modules to resolve the dependencies, package.json next to dist/.
 * Rebuilt whenever watch mode reruns, so no test runs a stale copy.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const cache = join(ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const pkg = mkdtempSync(join(cache, 'tessera-test-cli-'));
  const transpile = async () => {
    await build({
      entryPoints: sources(join(ROOT, 'src')),
      outbase: join(ROOT, 'src'),
      outdir: join(pkg, 'dist'),
      platform: 'node',
      format: 'esm',
      target: 'node20',
      tsconfig: join(ROOT, 'tsconfig.build.json'),
      logLevel: 'warning',
    });
    copyFileSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));
  };
  await transpile();
  project.onTestsRerun(transpile);
  project.provide('tesseraCli', join(pkg, 'dist', 'cli', 'main.js'));
  return () => rmSync(pkg, { recursive: true, force: true });
}
