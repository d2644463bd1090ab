import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readForeignHash } from '../../src/adapters/password-hashes/formats.js';
import { sourceInputs } from '../../src/adapters/source-exports/inputs.js';
import { SOURCES } from '../../src/domain/identity-transfer/sources/index.js';
import { settleUsernames } from '../../src/domain/identity-transfer/sources/usernames.js';
import { cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';

/**
 * Exports that are not what `--from` expects (another system's file, a file cut short, a
 * record it cannot read) are refused with a message naming the file or the user, before
 * anything is written.
 */

vi.setConfig({ testTimeout: 120_000 });

const FIXTURES = join(import.meta.dirname, 'fixtures');
const fixture = (...parts: string[]) => join(FIXTURES, ...parts);

let box: CliSandbox;
/** A copy of `content` in the sandbox, for a broken variant of a fixture. */
const scratch = (name: string, content: string | Buffer) => {
  const path = join(box.dir, name);
  writeFileSync(path, content);
  return path;
};
const half = (path: string) => {
  const content = readFileSync(path);
  return content.subarray(0, Math.floor(content.length / 2));
};

beforeAll(() => {
  box = cliSandbox();
});
afterAll(() => box?.remove());

const read = (source: string, args: string[]) =>
  SOURCES[source]!.read(args, sourceInputs, { now: Date.now() });

describe('an export that is not what the source reads is refused, naming the file', () => {
  it('a file cut short', async () => {
    const cases: Array<[string, string[], RegExp]> = [
      [
        'kratos',
        [scratch('k.json', half(fixture('kratos', 'identities.json')))],
        /k\.json is not JSON \(cut short\?\)/,
      ],
      [
        'keycloak',
        [scratch('r.json', half(fixture('keycloak', 'demo-realm.json')))],
        /r\.json is not JSON/,
      ],
      [
        'supabase',
        [
          scratch('u.csv', half(fixture('supabase', 'users_rows.csv'))),
          fixture('supabase', 'identities_rows.csv'),
        ],
        /u\.csv is not CSV with a header row \(cut short\?\)/,
      ],
      [
        'auth0',
        [scratch('a.json.gz', half(fixture('auth0', 'users-export.json.gz')))],
        /a\.json\.gz is not a complete gzip file/,
      ],
      [
        'auth0',
        [
          fixture('auth0', 'users-export.json.gz'),
          scratch('h.json', half(fixture('auth0', 'password-hashes.json'))),
        ],
        /h\.json: line [0-9]+ is not JSON \(cut short\?\)/,
      ],
      [
        'better-auth',
        [scratch('b.db', half(fixture('better-auth', 'app.db')))],
        /b\.db is no SQLite database/,
      ],
    ];
    for (const [source, args, message] of cases) {
      await expect(read(source, args), `${source} ${args[0]}`).rejects.toThrow(message);
    }
  });

  it("another system's export", async () => {
    await expect(read('kratos', [fixture('keycloak', 'demo-realm.json')])).rejects.toThrow(
      'the Kratos export (a JSON array of identities) must be an array',
    );
    await expect(read('keycloak', [fixture('kratos', 'identities.json')])).rejects.toThrow(
      'identities.json is no Keycloak realm export (it has no "realm")',
    );
    await expect(
      read('supabase', [
        fixture('supabase', 'identities_rows.csv'),
        fixture('supabase', 'users_rows.csv'),
      ]),
    ).rejects.toThrow(
      'identities_rows.csv has no encrypted_password column: is it the right table?',
    );
    await expect(read('better-auth', [fixture('supabase', 'users_rows.csv')])).rejects.toThrow(
      'users_rows.csv is no SQLite database',
    );
    await expect(
      read('auth0', [
        fixture('auth0', 'password-hashes.json'),
        fixture('auth0', 'users-export.json.gz'),
      ]),
    ).rejects.toThrow(/line 1 is no password-hash record/);
    await expect(read('supabase', [fixture('supabase', 'users_rows.csv')])).rejects.toThrow(
      'expected users_rows.csv, then identities_rows.csv',
    );
  });
});

describe('the CLI', () => {
  const env = () => box.env;
  const count = async () => {
    const listed = await runCli(['identity', 'list', '--json'], env());
    return (JSON.parse(listed.stdout) as unknown[]).length;
  };

  it('refuses a truncated export with exit 2 and the reason, writing nothing', async () => {
    const file = scratch('cut.json', half(fixture('kratos', 'identities.json')));
    const result = await runCli(['identity', 'import', '--from', 'kratos', file], env());
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^tessera: validation_error: .*cut\.json is not JSON \(cut short\?\)/m,
    );
    expect(await count()).toBe(0);
  });

  it('refuses an export with a record it cannot use, naming the user, writing nothing', async () => {
    const realm = JSON.parse(readFileSync(fixture('keycloak', 'demo-realm.json'), 'utf8')) as {
      users: Array<{
        username: string;
        credentials: Array<{ type: string; credentialData: string }>;
      }>;
    };
    // Keycloak can be configured to write argon2d, which no password should use.
    const carol = realm.users.find((user) => user.username === 'carol')!;
    const password = carol.credentials.find((credential) => credential.type === 'password')!;
    password.credentialData = password.credentialData.replace('["id"]', '["d"]');
    // An unknown algorithm (a provider of one's own), and no usable secretData.
    const dave = realm.users.find((user) => user.username === 'dave')!;
    dave.credentials[0]!.credentialData = JSON.stringify({ hashIterations: 1, algorithm: 'md5' });
    const file = scratch('realm.json', JSON.stringify(realm));
    const result = await runCli(
      ['identity', 'import', '--from', 'keycloak', file, '--json'],
      env(),
    );
    expect(result.code).toBe(2);
    const refusal = JSON.parse(result.stdout) as {
      message: string;
      bad_lines: Array<{ user: string; message: string }>;
    };
    expect(refusal.message).toBe('2 bad user(s); nothing was imported');
    expect(refusal.bad_lines).toEqual([
      {
        line: 4,
        user: 'users[3] (carol)',
        message: 'argon2d hashes are not accepted (only argon2id and argon2i)',
      },
      {
        line: 5,
        user: 'users[4] (dave)',
        message:
          'password algorithm "md5" is not one the import reads (pbkdf2, pbkdf2-sha256, pbkdf2-sha512, argon2)',
      },
    ]);
    expect(await count()).toBe(0);
  });

  it('refuses an unknown system', async () => {
    const result = await runCli(['identity', 'import', '--from', 'okta', 'x.json'], env());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      '--from must be one of: kratos, keycloak, supabase, auth0, better-auth',
    );
  });
});

describe('hash formats of the sources', () => {
  it("Kratos's PBKDF2 bounds the work of every block of a key longer than the digest", () => {
    const salt = Buffer.alloc(16, 1).toString('base64').replace(/=+$/, '');
    const key = (bytes: number) => Buffer.alloc(bytes, 2).toString('base64').replace(/=+$/, '');
    expect(readForeignHash(`$pbkdf2-sha256$i=1000000,l=32$${salt}$${key(32)}`)).toHaveProperty(
      'scheme',
      'pbkdf2-sha256',
    );
    expect(readForeignHash(`$pbkdf2-sha256$i=1000001,l=64$${salt}$${key(64)}`)).toBe(
      'pbkdf2-sha256 iterations 1000001 × 2 blocks are above the import bound of 2000000',
    );
    expect(readForeignHash(`$pbkdf2-sha256$i=1000,l=32$${salt}$${key(64)}`)).toBe(
      'pbkdf2-sha256 hash is not the l=32 bytes it says',
    );
  });

  it("better-auth's scrypt: NFKC-normalised passwords, the salt's hex text as the salt", async () => {
    // Made by better-auth 1.7.25's hashPassword for "ﬁnal ①" (NFKC: "final 1").
    const hash = readForeignHash(betterAuthHash) as { verify(p: string): Promise<boolean> };
    expect(await hash.verify('ﬁnal ①')).toBe(true);
    expect(await hash.verify('final 1')).toBe(true);
    expect(await hash.verify('final 2')).toBe(false);
  });
});

describe('usernames derived from the email', () => {
  it('keep fitting source usernames, and make the rest unique in the order of the export', () => {
    const { usernames, derived } = settleUsernames([
      { username: null, email: 'ada@example.com' },
      { username: 'ada', email: 'other@example.com' },
      { username: null, email: 'Ada@example.org' },
      { username: 'Al', email: 'al@example.com' },
      { username: null, email: 'o.brien+news@example.com' },
      { username: null, email: '__@example.com' },
      { username: null, email: undefined },
      { username: 'Bad Name!', email: undefined },
    ]);
    expect(usernames).toEqual([
      'ada-2',
      'ada',
      'ada-3',
      'al-2',
      'o.brien+news',
      'user',
      'user-2',
      'bad-name',
    ]);
    expect(derived).toEqual([true, false, true, true, true, true, true, true]);
  });
});

const betterAuthHash =
  '154b3f7b0a42995c7ef41b8097946e53:64c70c95875837141a18536f3b6096d8860178a5034556584edc1071453b8ddb1b9a209c0b33b6c7433f5b78422e780a821755dfe0920e421f8dc49de86d0f6d';
