import { readFileSync } from 'node:fs';

/**
 * The package's version, read at run time: package.json sits two levels above this module
 * both as src/cli/version.ts (run through tsx) and as dist/cli/version.js (installed), and
 * the build cannot import it (it is outside tsc's rootDir).
 */
export function packageVersion(): string {
  const file = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}
