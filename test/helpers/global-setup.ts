import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `dist/cli/main.js` of this run's build of src/ (see test/helpers/cli.ts). */
    tesseraCli: string;
    /** A directory for files that tests of any worker leave behind; removed after the run. */
    scratchDir: string;
  }
}

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * Packages left as files: native addons; packages that find files or start threads relative
 * to their own location (pino's transports, oidc-provider's views, zxcvbn's dictionaries);
 * and `cookie`, a CommonJS package @fastify/cookie loads with `import()`, whose named
 * exports esbuild's interop would hide.
 */
const UNBUNDLED = [
  'cookie',
  'better-sqlite3',
  '@node-rs/*',
  'pg-native',
  'pino',
  'pino-*',
  'thread-stream',
  'oidc-provider',
  '@zxcvbn-ts/*',
];

/**
 * The suite spawns the CLI and `tessera serve` hundreds of times. Each process would spend
 * most of its start-up resolving and loading modules (about 570 files for `--help`, 262 of
 * them Kysely's; 0.58 s against 0.21 s bundled), so the suite builds src/cli/main.ts once
 * into a bundle: the same code and the same lazy imports (split into chunks, loaded on
 * use), in a package laid out as installed (inside node_modules to resolve the packages
 * left unbundled, package.json beside dist/). Rebuilt whenever watch mode reruns, so no test
 * runs a stale copy. `npm run build` (tsc) stays what is shipped; the packaging test runs it.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const cache = join(ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const pkg = mkdtempSync(join(cache, 'tessera-test-cli-'));
  const transpile = async () => {
    await build({
      entryPoints: [join(ROOT, 'src', 'cli', 'main.ts')],
      bundle: true,
      splitting: true,
      outdir: join(pkg, 'dist', 'cli'),
      platform: 'node',
      format: 'esm',
      target: 'node20',
      tsconfig: join(ROOT, 'tsconfig.build.json'),
      external: UNBUNDLED,
      // CommonJS packages bundled into ESM call require() for Node's own modules.
      banner: {
        js: "import { createRequire as __tesseraRequire } from 'node:module'; const require = __tesseraRequire(import.meta.url);",
      },
      logLevel: 'warning',
    });
    copyFileSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));
  };
  await transpile();
  project.onTestsRerun(transpile);
  project.provide('tesseraCli', join(pkg, 'dist', 'cli', 'main.js'));
  mkdirSync(join(pkg, 'scratch'));
  project.provide('scratchDir', join(pkg, 'scratch'));
  return () => rmSync(pkg, { recursive: true, force: true });
}
