import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { DomainError } from '../../src/domain/errors.js';
import { nameTerms, restWithoutNames } from '../../src/domain/password-policy/context.js';
import {
  PASSWORD_MESSAGES,
  type PasswordContext,
  type PasswordPolicy,
  requirePasswordPolicy,
} from '../../src/domain/password-policy/policy.js';
import {
  loadCommonPasswords,
  resolveCommonPasswordList,
} from '../../src/password-checks/common-passwords.js';
import { createPasswordPolicy } from '../../src/password-checks/password-checks.js';
import { PasswordEstimator, zxcvbnScore } from '../../src/password-checks/strength.js';

/** The real list and the real estimator, at the default threshold. */
const policy = createPasswordPolicy(2);
const alice: PasswordContext = { username: 'alice.smith', displayName: 'Alice Smith' };

/** The refusal's message, or null when the password is accepted. */
async function refusal(
  password: string,
  context: PasswordContext = alice,
  using: PasswordPolicy = policy,
): Promise<string | null> {
  try {
    await requirePasswordPolicy(using, password, context);
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('validation_error');
    return (error as DomainError).message;
  }
}

describe('password policy', () => {
  it.each([
    ['7 code points', 'kiwi-la'],
    ['257 code points', 'kiwi-lantern-93 '.repeat(16) + 'k'],
    ['7 astral code points (14 UTF-16 units)', '🔑🐢🌵🎲🧭🪁🍋'],
    ['empty', ''],
  ])('refuses %s by length', async (_label, password) => {
    expect(await refusal(password)).toBe(PASSWORD_MESSAGES.length);
  });

  it.each([
    'password123',
    'PASSWORD123',
    'Password123',
    'ＰＡＳＳＷＯＲＤ１２３', // fullwidth: NFKC folds it onto the listed one
    'qwertyuiop',
    'iloveyou2',
    '1q2w3e4r5t',
    'trustno1',
  ])('refuses %s: on the list of common and breached passwords', async (password) => {
    expect(await refusal(password, { username: 'bob' })).toBe(PASSWORD_MESSAGES.common);
  });

  it.each([
    ['the username plus digits', 'alice.smith2024'],
    ['a part of the username plus a year and symbols', 'Alice1990!!'],
    ['the display name plus digits', 'Alice Smith 77'],
    ['the names run together', 'alicesmith'],
    ['the surname twice', 'smithsmith'],
    ['the username reversed', 'htims.ecila'],
    ['a name reversed plus digits', 'ecila2024'],
    ['the names around a common password', 'Alice password123 Smith'],
  ])('refuses %s: built from the names', async (_label, password) => {
    expect(await refusal(password)).toBe(PASSWORD_MESSAGES.names);
  });

  it('takes names from an email-like username and from a non-Latin display name', async () => {
    const names = { username: 'dave@example.org', displayName: 'Ёжик Туманов' };
    expect(await refusal('Dave-1234!', names)).toBe(PASSWORD_MESSAGES.names);
    expect(await refusal('ТУМАНОВ2024', names)).toBe(PASSWORD_MESSAGES.names);
  });

  it.each([
    ['a decorated common password', 'password2024'],
    ['another decorated one', 'letmein2024'],
    ['a cartoon name and a year', 'naruto2024'],
    ['one repeated character', 'x'.repeat(256)],
    ['an alphabet run', 'lmnopqrstu'],
    ['a keyboard walk', 'mnbvcxzlkj'],
  ])('refuses %s below the strength threshold', async (_label, password) => {
    expect(await refusal(password, { username: 'bob' })).toBe(PASSWORD_MESSAGES.weak);
  });

  it.each([
    ['a random 8 characters', 'zq8vbt3w'],
    ['8 distinct emoji', '🔑🐢🌵🎲🧭🪁🍋🦉'],
    ['a passphrase', 'correct horse battery'],
    ['a passphrase holding the first name', 'alice in the violet tractor'],
    ['a word that contains a short name', 'remarkable crocodile'],
    ['256 code points', 'kiwi-lantern-93 '.repeat(16)],
    ['a German phrase', 'Gärtnerei am Fluss'],
    ['a Russian phrase', 'мой пароль длинный'],
  ])('accepts %s', async (_label, password) => {
    expect(await refusal(password, { ...alice, username: 'mark' })).toBeNull();
  });

  it('without a threshold, only the list and the names refuse', async () => {
    const listOnly = createPasswordPolicy(0);
    expect(listOnly.strength).toBeUndefined();
    expect(await refusal('password2024', { username: 'bob' }, listOnly)).toBeNull();
    expect(await refusal('password123', { username: 'bob' }, listOnly)).toBe(
      PASSWORD_MESSAGES.common,
    );
    expect(await refusal('alice.smith2024', alice, listOnly)).toBe(PASSWORD_MESSAGES.names);
  });

  it('every message says what to do and none repeats the password', async () => {
    for (const message of Object.values(PASSWORD_MESSAGES)) {
      expect(message).toMatch(/^password (must|is)/);
      expect(message).toMatch(/choose|between/);
    }
    for (const password of ['password123', 'alice.smith2024', 'password2024', 'kiwi']) {
      const message = await refusal(password);
      expect(message).not.toBeNull();
      expect(message!.toLowerCase()).not.toContain(password);
    }
  });

  it('asks the list only after the cheap checks, and the estimator only after the list', async () => {
    const asked: string[] = [];
    const counting: PasswordPolicy = {
      isCommonPassword: async (password) => {
        asked.push(`list:${password}`);
        return password === 'on the list';
      },
      strength: {
        minScore: 3,
        score: async (password, inputs) => {
          asked.push(`score:${password}:${inputs.join(',')}`);
          return 3;
        },
      },
    };
    expect(await refusal('short', { username: 'bob' }, counting)).toBe(PASSWORD_MESSAGES.length);
    expect(await refusal('bob-2024', { username: 'bob' }, counting)).toBe(PASSWORD_MESSAGES.names);
    expect(asked).toEqual([]);
    expect(await refusal('on the list', { username: 'bob' }, counting)).toBe(
      PASSWORD_MESSAGES.common,
    );
    expect(await refusal('long enough', { username: 'bob', displayName: 'Bob' }, counting)).toBe(
      null,
    );
    expect(asked).toEqual(['list:on the list', 'list:long enough', 'score:long enough:bob']);
  });
});

describe('name terms', () => {
  it('whole, word by word, run together and reversed; longest first; short parts ignored', () => {
    expect(nameTerms(['a.bc.dave', 'Jo Li'])).toEqual([
      'a.bc.dave',
      'evad.cb.a',
      'abcdave',
      'evadcba',
      'jo li',
      'il oj',
      'dave',
      'evad',
      'joli',
      'iloj',
    ]);
  });

  it('the rest without the names drops whitespace; null when no name occurs', () => {
    expect(restWithoutNames('Alice Smith 1990!', ['alice.smith', 'Alice Smith'])).toBe('1990!');
    expect(restWithoutNames('violet tractor', ['alice'])).toBeNull();
  });
});

describe('the common password list', () => {
  it('holds at least 100,000 settable entries', async () => {
    const list = await loadCommonPasswords(resolveCommonPasswordList());
    expect(list.size).toBeGreaterThanOrEqual(100_000);
    expect(list.has('password123')).toBe(true);
    expect(list.has('iloveyou2')).toBe(true);
    // On the list, but shorter than the length rule allows: not kept.
    expect(list.has('123456')).toBe(false);
    expect(list.has('correct horse battery')).toBe(false);
  });

  it('keeps each line in the comparison form, and only lines of 8 to 256 code points', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-list-'));
    try {
      const file = join(dir, 'list.txt.gz');
      const lines = [
        'ＰＡＳＳＷＯＲＤ１２３', // fullwidth: NFKC then lower case gives password123
        'MixedCase99',
        'Zürich2024',
        'short',
        '😀😀😀😀😀😀😀', // 14 UTF-16 units but 7 code points
        'x'.repeat(257),
        'y'.repeat(256),
        'MixedCase99', // a repeat counts once
      ];
      writeFileSync(file, gzipSync(`${lines.join('\r\n')}\n`));
      const list = await loadCommonPasswords(file);
      expect(list.size).toBe(4);
      for (const kept of ['password123', 'mixedcase99', 'zürich2024', 'y'.repeat(256)]) {
        expect(list.has(kept)).toBe(true);
      }
      for (const dropped of ['short', '😀😀😀😀😀😀😀', 'x'.repeat(257), 'MixedCase99', '']) {
        expect(list.has(dropped)).toBe(false);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails the load of a missing or damaged file rather than waiting', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-list-'));
    try {
      await expect(loadCommonPasswords(join(dir, 'missing.gz'))).rejects.toThrow(/ENOENT/);
      const damaged = join(dir, 'damaged.gz');
      writeFileSync(damaged, gzipSync('password123\n').subarray(0, 12));
      await expect(loadCommonPasswords(damaged)).rejects.toThrow(/end of file/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a listed password whatever its width or case', async () => {
    expect(await refusal('PassWord123', { username: 'bob', displayName: null })).toBe(
      PASSWORD_MESSAGES.common,
    );
    expect(await refusal('ｐａｓｓｗｏｒｄ１２３', { username: 'bob', displayName: null })).toBe(
      PASSWORD_MESSAGES.common,
    );
  });
});

describe('the strength estimator on its own thread', () => {
  it('fails each estimate of a thread that died, and starts a new one for the next', async () => {
    // A heap cap too small for the dictionaries: every thread dies loading them.
    const estimator = new PasswordEstimator(2);
    for (let attempt = 0; attempt < 2; attempt++) {
      await expect(estimator.score('correct horse battery', [])).rejects.toThrow(/memory limit/);
    }
  });

  it('keeps a process that waits for nothing else alive until the answer', () => {
    // The second estimate finds the thread idle (unreferenced): it must hold the process.
    const module = new URL('../../src/password-checks/strength.ts', import.meta.url).href;
    const script = `const { zxcvbnScore } = await import(${JSON.stringify(module)});
      console.log(await zxcvbnScore('correct horse battery', []));
      await new Promise((resolve) => setTimeout(resolve, 200));
      console.log(await zxcvbnScore('password2024', []));`;
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect({ status: child.status, stdout: child.stdout }).toEqual({ status: 0, stdout: '4\n1\n' });
  });

  it('answers estimates asked at once, each with its own score', async () => {
    const passwords = ['password2024', 'correct horse battery', 'zq8vbt3w', 'lmnopqrstu'];
    const scores = await Promise.all(passwords.map((password) => zxcvbnScore(password, [])));
    expect(scores).toEqual([1, 4, 2, 0]);
  });
});

describe('SERVICE_PASSWORD_MIN_SCORE', () => {
  const base = { SERVICE_DATABASE_URL: ':memory:' };
  it('defaults to 2 and takes 0 to 4', () => {
    expect(loadConfig(base).passwordMinScore).toBe(2);
    expect(loadConfig({ ...base, SERVICE_PASSWORD_MIN_SCORE: '0' }).passwordMinScore).toBe(0);
    expect(loadConfig({ ...base, SERVICE_PASSWORD_MIN_SCORE: '4' }).passwordMinScore).toBe(4);
  });

  it.each(['5', '-1', '1.5', 'strong'])('refuses %s naming the variable', (value) => {
    expect(() => loadConfig({ ...base, SERVICE_PASSWORD_MIN_SCORE: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, SERVICE_PASSWORD_MIN_SCORE: value })).toThrow(
      /SERVICE_PASSWORD_MIN_SCORE/,
    );
  });
});
