import { execFile } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const execFileAsync = promisify(execFile);

/** Runs a command; a failure's error carries its output (tsc reports on stdout). */
async function run(command: string, args: string[], cwd?: string): Promise<string> {
  try {
    return (await execFileAsync(command, args, { cwd })).stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}
const PACKAGE = new URL('..', import.meta.url).pathname;
const ROOT = new URL('../../..', import.meta.url).pathname;

const CONSUMER = `
import { createTesseraClient, TesseraError, type Identity } from '@tessera/client';
import { createBrowserClient } from '@tessera/client/browser';
const tessera = createTesseraClient({ baseUrl: 'http://127.0.0.1:9' });
export const pending: Promise<Identity> = tessera.getIdentity('x');
export const browser = createBrowserClient({ baseUrl: 'http://127.0.0.1:9' });
export const isError = (e: unknown) => e instanceof TesseraError;
`;

const IMPORTS = `
const client = await import('@tessera/client');
const entries = await Promise.all(
  ['browser', 'tokens', 'express', 'fastify', 'next'].map((e) => import('@tessera/client/' + e)),
);
const tessera = client.createTesseraClient({ baseUrl: 'http://127.0.0.1:9', retry: { retries: 0 } });
const error = await tessera.readyz().catch((e) => e);
console.log(JSON.stringify({
  exports: entries.map((e) => Object.keys(e).length > 0),
  code: error instanceof client.TesseraError ? error.code : String(error),
}));
`;

/**
 * Issue 22 item 10: the package installs from its packed tarball into a project outside this
 * repository, as the README says. Its one dependency is packed from node_modules too, so the
 * install needs no registry (`--offline`).
 */
describe('the packed client package', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-client-pack-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('packs on its own and installs, imports and typechecks in a fresh project', async () => {
    const out = join(dir, 'out');
    mkdirSync(out);
    // A copy outside the repository (only the installed modules linked in): the build may
    // not reach for a file of the repository around the package.
    const copy = join(dir, 'client');
    cpSync(PACKAGE, copy, {
      recursive: true,
      filter: (source) => !/\/(dist|node_modules)$/.test(source),
    });
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
    const stdout = await run('npm', ['pack', '--json', '--pack-destination', out], copy);
    const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as {
      filename: string;
      files: { path: string }[];
    }[];
    const files = packed!.files.map((f) => f.path);
    expect(
      files.filter(
        (f) => !/^(dist\/.+\.(js|d\.ts)|package\.json|openapi\.json|README\.md|LICENSE)$/.test(f),
      ),
    ).toEqual([]);
    expect(files).toContain('dist/index.js');

    // Paths, not names: `npm pack node_modules/x` would read as a GitHub repository.
    const dependencies = ['openapi-fetch', 'openapi-typescript-helpers'];
    await run('npm', [
      'pack',
      '--pack-destination',
      out,
      ...dependencies.map((d) => join(ROOT, 'node_modules', d)),
    ]);
    const app = join(dir, 'app');
    mkdirSync(app);
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'app', private: true, type: 'module' }),
    );
    const tarballs = readdirSync(out).map((f) => join(out, f));
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', ...tarballs], app);

    const imported = await run('node', ['--input-type=module', '-e', IMPORTS], app);
    expect(JSON.parse(imported)).toEqual({
      exports: [true, true, true, true, true],
      code: 'unavailable',
    });

    writeFileSync(join(app, 'app.ts'), CONSUMER);
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          lib: ['ES2023', 'DOM'],
          types: [],
          strict: true,
          noEmit: true,
        },
        include: ['app.ts'],
      }),
    );
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', app]);
  }, 180_000);
});
