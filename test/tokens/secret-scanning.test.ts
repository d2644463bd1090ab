import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse as parseToml } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { TOKEN_PREFIX, newToken, tokenShape } from '../../src/lib/tokens.js';

/** docs/secret-scanning: the rules as the tools read them, parsed from the shipped files. */
interface ScanRule {
  name: string;
  kind: 'session' | 'service' | 'oidcClientSecret';
  pattern: RegExp;
  keywords: string[];
  entropy: number;
}

const toml = parseToml(readFileSync('docs/secret-scanning/gitleaks.toml', 'utf8')) as {
  extend: { useDefault: boolean };
  rules: {
    id: string;
    regex: string;
    secretGroup: number;
    entropy: number;
    keywords: string[];
  }[];
};
const yaml = parseYaml(readFileSync('docs/secret-scanning/trufflehog.yaml', 'utf8')) as {
  detectors: { name: string; keywords: string[]; regex: Record<string, string>; entropy: number }[];
};

const kindOf = (name: string) =>
  /session/i.test(name) ? 'session' : /client/i.test(name) ? 'oidcClientSecret' : 'service';
const RULES: ScanRule[] = [
  ...toml.rules.map((rule) => ({
    name: `gitleaks ${rule.id}`,
    kind: kindOf(rule.id),
    // RE2 and JavaScript read these patterns alike (classes, \b, (?:), $ without flags).
    pattern: new RegExp(rule.regex, 'g'),
    keywords: rule.keywords,
    entropy: rule.entropy,
  })),
  ...yaml.detectors.map((detector) => ({
    name: `trufflehog ${detector.name}`,
    kind: kindOf(detector.name),
    pattern: new RegExp(detector.regex.token!, 'g'),
    keywords: detector.keywords,
    entropy: detector.entropy,
  })),
] as ScanRule[];

/** What the tool reports: capture group 1 of every match. */
function findings(rule: ScanRule, text: string): string[] {
  return [...text.matchAll(rule.pattern)].map((match) => match[1]!);
}

/** Shannon entropy in bits per character, as both tools compute it on the secret. */
function entropy(value: string): number {
  const counts = new Map<string, number>();
  for (const c of value) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / value.length) * Math.log2(n / value.length);
  return bits;
}

/** Contexts a token leaks in: env files, JSON, headers, shell, URLs, end of text. */
const contexts = (token: string) => [
  `TESSERA_TOKEN=${token}\n`,
  `{"token":"${token}","other":1}`,
  `Authorization: Bearer ${token}\r\n`,
  `curl -H 'Cookie: service_session=${token}' https://id.example.org`,
  `https://app.example.org/callback?token=${token}&next=/`,
  `  token: ${token}`,
];

describe('secret scanning rules', () => {
  it('ship one rule per credential kind in each tool, gitleaks on top of its defaults', () => {
    expect(toml.extend.useDefault).toBe(true);
    expect(toml.rules.map((rule) => rule.secretGroup)).toEqual([1, 1, 1]);
    for (const tool of ['gitleaks', 'trufflehog']) {
      const kinds = RULES.filter((rule) => rule.name.startsWith(tool)).map((rule) => rule.kind);
      expect(kinds.sort()).toEqual(['oidcClientSecret', 'service', 'session']);
    }
    for (const rule of RULES) expect(rule.keywords).toEqual([TOKEN_PREFIX[rule.kind]]);
  });

  it.each(RULES.map((rule) => [rule.name, rule] as const))(
    '%s finds minted tokens of its kind in text, and only those',
    (_name, rule) => {
      const other = rule.kind === 'session' ? 'service' : 'session';
      for (let i = 0; i < 200; i++) {
        const token = newToken(rule.kind);
        for (const text of contexts(token)) expect(findings(rule, text)).toEqual([token]);
        expect(findings(rule, token)).toEqual([token]);
        expect(findings(rule, `${token}\n${newToken(rule.kind)}`)).toHaveLength(2);
        expect(findings(rule, `x=${newToken(other)} y=${newToken('flow')}`)).toEqual([]);
        expect(entropy(token)).toBeGreaterThan(rule.entropy);
      }
    },
  );

  it.each(RULES.map((rule) => [rule.name, rule] as const))(
    '%s matches no near miss',
    (_name, rule) => {
      const prefix = TOKEN_PREFIX[rule.kind];
      for (let i = 0; i < 200; i++) {
        const token = newToken(rule.kind);
        const secret = token.slice(prefix.length);
        const misses = [
          token.slice(0, -1), // 42 characters
          `${token}A`, // 44
          `${token}${secret}`, // twice as long
          `${prefix}${secret.slice(0, -1)}B`, // a last character no encoder writes
          `${prefix.toUpperCase()}${secret}`,
          `${prefix.replace('tess_', 'tes_')}${secret}`,
          `${prefix.replace('tess_', 'tess-')}${secret}`,
          `x${token}`, // glued to a word
          `tess_f_${secret}`,
          `${prefix}${secret.slice(0, 20)} ${secret.slice(20)}`,
        ];
        for (const miss of misses) {
          for (const text of [miss, `token=${miss}\n`]) expect(findings(rule, text)).toEqual([]);
        }
      }
      // A placeholder has the shape but not the entropy: the tools drop it.
      const placeholder = `${prefix}${'A'.repeat(43)}`;
      expect(findings(rule, placeholder)).toEqual([placeholder]);
      expect(entropy(placeholder)).toBeLessThan(rule.entropy);
    },
  );
});

describe('the checksum check of docs/tokens.md', () => {
  let dir: string;
  let isTesseraToken: (value: string) => boolean;
  beforeAll(async () => {
    const doc = readFileSync('docs/tokens.md', 'utf8');
    const snippet = /```js\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(snippet).toBeDefined();
    dir = mkdtempSync(join(tmpdir(), 'tessera-snippet-'));
    const file = join(dir, 'snippet.mjs');
    writeFileSync(file, snippet!);
    ({ isTesseraToken } = (await import(pathToFileURL(file).href)) as {
      isTesseraToken: typeof isTesseraToken;
    });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('accepts minted tokens of every kind', () => {
    for (const kind of ['session', 'service', 'flow', 'oidcClientSecret'] as const) {
      for (let i = 0; i < 500; i++) expect(isTesseraToken(newToken(kind))).toBe(true);
    }
  });

  it('refuses random strings of the right shape, typos and other near misses', () => {
    let refused = 0;
    for (let i = 0; i < 2000; i++) {
      const made = `tess_s_${randomBytes(32).toString('base64url')}`;
      // Agrees with the server's check, which passes one made-up string in 2^32.
      expect(isTesseraToken(made)).toBe(tokenShape('session', made) === 'crc32');
      if (!isTesseraToken(made)) refused++;
    }
    expect(refused).toBeGreaterThan(1990);
    const token = newToken('service');
    const at = 20;
    const typo = token.slice(0, at) + (token[at] === 'Q' ? 'R' : 'Q') + token.slice(at + 1);
    for (const miss of [
      typo,
      token.slice(0, -1),
      `${token}A`,
      token.replace('tess_svc_', 'tess_s_'),
      ` ${token}`,
      '',
    ]) {
      expect(isTesseraToken(miss)).toBe(false);
    }
  });
});
