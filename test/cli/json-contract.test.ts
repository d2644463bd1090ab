import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cliJson, cliSandbox, type CliSandbox, runCli, runNode } from '../helpers/cli.js';

const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const PASSWORD = 'a long enough password';
const { version, bin } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  bin: { tessera: string };
};

/** Every key of every object in a JSON value, however deep. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => [key, ...keysOf(inner)]);
}

/** The script contract: stdout is exactly one `{error, message}` document, stderr is empty. */
async function expectJsonFailure(
  args: string[],
  env: Record<string, string>,
  expected: { error: string; exit: number; message?: RegExp },
  input?: string,
) {
  const result = await runCli([...args, '--json'], env, input);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(expected.exit);
  const document = JSON.parse(result.stdout) as Record<string, unknown>;
  expect(Object.keys(document).sort()).toEqual(['error', 'message']);
  expect(document.error).toBe(expected.error);
  expect(document.message).toEqual(expect.any(String));
  if (expected.message) expect(document.message).toMatch(expected.message);
}

// Each CLI run is a Node process of its own: generous time for a loaded machine.
describe('tessera CLI: what a script can rely on', { timeout: 180_000 }, () => {
  let box: CliSandbox;
  beforeAll(() => {
    box = cliSandbox();
  });
  afterAll(() => box?.remove());

  it('--version and -V print the version of package.json', async () => {
    for (const flag of ['--version', '-V']) {
      expect(await runCli([flag], box.env)).toEqual({
        code: 0,
        stdout: `${version}\n`,
        stderr: '',
      });
    }
  });

  it('--version works from a build laid out as installed; nothing else needs package.json', async () => {
    // This run's transpile of src/ (test/helpers/global-setup.ts), copied without the
    // package.json beside it, inside node_modules so that it resolves its dependencies.
    const cache = join(ROOT, 'node_modules', '.cache');
    mkdirSync(cache, { recursive: true });
    const pkg = mkdtempSync(join(cache, 'tessera-cli-build-'));
    try {
      cpSync(dirname(dirname(inject('tesseraCli'))), join(pkg, 'dist'), { recursive: true });
      const main = join(pkg, 'dist', 'cli', 'main.js');
      const migrated = await runNode([main, 'migrate', '--json'], box.env);
      expect(migrated).toMatchObject({ code: 0, stderr: '' });
      copyFileSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));
      const result = await runNode([main, '--version'], box.env);
      expect(result).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    } finally {
      rmSync(pkg, { recursive: true, force: true });
    }
  });

  it("npm run build emits the CLI where package.json's bin and --version expect it", () => {
    // The layout the test above runs, as tsc derives it from tsconfig.build.json: the path
    // tsc computes for each file's output, without compiling (that is CI's `npm ci`).
    const config = ts.getParsedCommandLineOfConfigFile(
      join(ROOT, 'tsconfig.build.json'),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
          throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
        },
      },
    )!;
    const emitted = (source: string) =>
      ts.getOutputFileNames(config, join(ROOT, source), false).find((file) => file.endsWith('.js'));
    expect(emitted('src/cli/main.ts')).toBe(join(ROOT, bin.tessera));
    // version.ts reads ../../package.json from where it runs.
    expect(emitted('src/cli/version.ts')).toBe(join(ROOT, 'dist', 'cli', 'version.js'));
  });

  it('an empty list says so, and is [] with --json', async () => {
    for (const [args, empty] of [
      [['identity', 'list'], 'no identities'],
      [['svc', 'list'], 'no service tokens'],
      [['audit', 'list'], 'no audit entries'],
    ] as const) {
      expect(await runCli([...args], box.env)).toEqual({
        code: 0,
        stdout: `${empty}\n`,
        stderr: '',
      });
      expect(await cliJson([...args], box.env)).toEqual([]);
    }
  });

  it('never loads the HTTP adapter (src/http, Fastify) for a command that does not serve', async () => {
    const log = join(box.dir, 'modules.log');
    const result = await runNode(
      [
        '--import',
        'tsx',
        '--import',
        './test/helpers/record-modules.mjs',
        'src/cli/main.ts',
      ].concat(['identity', 'list', '--json']),
      { ...box.env, TESSERA_MODULE_LOG: log },
    );
    expect(result.code).toBe(0);
    const loaded = readFileSync(log, 'utf8').trim().split('\n');
    expect(loaded).toContain(`file://${ROOT}/src/cli/main.ts`);
    expect(loaded).toContain(`file://${ROOT}/src/storage/sqlite/open.ts`);
    expect(loaded.filter((url) => url.includes('/src/http/'))).toEqual([]);
    expect(loaded.filter((url) => url.includes('/node_modules/fastify/'))).toEqual([]);
  });

  it('every --json document uses snake_case keys (identity enable/disable included)', async () => {
    const documents: unknown[] = [];
    const json = async <T>(args: string[], input?: string) => {
      const document = await cliJson<T>(args, box.env, input);
      documents.push(document);
      return document;
    };
    await json(['migrate']);
    await json(['svc', 'create', '--name', 'billing', '--grant', 'introspect']);
    await json(['svc', 'list']);
    await json(['svc', 'revoke', 'billing']);
    await json(['identity', 'create', '--username', 'carol', '--password-stdin'], PASSWORD);
    await json(['identity', 'show', 'carol']);
    await json(['identity', 'list']);
    const disabled = await json(['identity', 'disable', 'carol', '--revoke-sessions']);
    expect(disabled).toEqual({ identity: expect.any(Object), revoked_sessions: 0 });
    expect(await json(['identity', 'enable', 'carol'])).toEqual({
      identity: expect.objectContaining({ username: 'carol', state: 'active' }),
      revoked_sessions: 0,
    });
    await json(['identity', 'set-password', 'carol', '--password-stdin'], `${PASSWORD}!\n`);
    await json(['sweep']);
    await json(['audit', 'list']);
    const keys = new Set(documents.flatMap(keysOf));
    expect(keys.has('revoked_sessions')).toBe(true);
    expect([...keys].filter((key) => !/^[a-z0-9]+(_[a-z0-9]+)*$/.test(key))).toEqual([]);
  });

  describe('failures', () => {
    it('with --json, a refused or failed command is one {error, message} document', async () => {
      await expectJsonFailure(['identity', 'show', 'nobody'], box.env, {
        error: 'not_found',
        exit: 1,
      });
      await expectJsonFailure(['svc', 'revoke', 'nobody'], box.env, {
        error: 'not_found',
        exit: 1,
      });
      await expectJsonFailure(
        ['identity', 'create', '--username', 'CAROL', '--password-stdin'],
        box.env,
        { error: 'username_taken', exit: 1 },
        PASSWORD,
      );
      await expectJsonFailure(
        ['identity', 'create', '--username', 'dave', '--password-stdin'],
        box.env,
        { error: 'validation_error', exit: 2, message: /^password must be between 8 and 256/ },
        'short',
      );
      await expectJsonFailure(['identity', 'create', '--username', 'dave'], box.env, {
        error: 'validation_error',
        exit: 2,
        message: /--password-stdin is required/,
      });
      await expectJsonFailure(['audit', 'list', '--limit', '0'], box.env, {
        error: 'validation_error',
        exit: 2,
        message: /^limit must be an integer from 1 to 10000$/,
      });
    });

    it("with --json, commander's usage errors are the same document, exit status 2", async () => {
      for (const [args, message] of [
        [['identity', 'show'], /^missing required argument 'idOrUsername'$/],
        [['identity', 'show', 'carol', '--bogus'], /^unknown option '--bogus'$/],
        [['identity', 'show', 'carol', 'extra'], /too many arguments/],
        [['frobnicate'], /^unknown command 'frobnicate'$/],
        [['svc', 'create'], /required option '--name <name>' not specified/],
        [['identity'], /^unknown option '--json'$/],
      ] as const) {
        await expectJsonFailure([...args], box.env, {
          error: 'validation_error',
          exit: 2,
          message,
        });
      }
    });

    it('with --json, bad settings and an unreachable database are documents too', async () => {
      await expectJsonFailure(
        ['svc', 'list'],
        { ...box.env, SERVICE_PORT: 'abc' },
        {
          error: 'validation_error',
          exit: 2,
          message: /SERVICE_PORT/,
        },
      );
      await expectJsonFailure(
        ['svc', 'list'],
        { ...box.env, SERVICE_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' },
        { error: 'unavailable', exit: 1 },
      );
    });

    it('without --json: a usage error exits 2 with one commander message and nothing on stdout', async () => {
      const result = await runCli(['identity', 'show', 'carol', '--bogus'], box.env);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.match(/unknown option '--bogus'/g)).toHaveLength(1);
      const invalid = await runCli(['audit', 'list', '--limit', 'ten'], box.env);
      expect(invalid).toEqual({
        code: 2,
        stdout: '',
        stderr: 'tessera: validation_error: limit must be an integer from 1 to 10000\n',
      });
    });
  });
});
