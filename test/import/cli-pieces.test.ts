import { describe, expect, it } from 'vitest';
import { utf8Lines } from '../../src/cli/lines.js';
import { progressBar, renderBar } from '../../src/cli/progress.js';
import { withImportedHashes } from '../../src/adapters/password-hashes/hasher.js';
import { IMPORTED_PREFIX } from '../../src/adapters/password-hashes/formats.js';
import { FIXTURE_FORMATS } from '../helpers/hash-fixtures.js';

async function collect(chunks: Buffer[]): Promise<string[]> {
  const out: string[] = [];
  async function* source() {
    yield* chunks;
  }
  for await (const line of utf8Lines(source())) out.push(line);
  return out;
}

describe('reading an import file', () => {
  it('splits on \\n and \\r\\n across chunk boundaries, multi-byte characters included', async () => {
    const bytes = Buffer.from('{"a":"é€"}\r\n\n{"b":"😀"}\n{"c":1}', 'utf8');
    // One byte at a time: every sequence is cut somewhere.
    const chunks = [...bytes].map((byte) => Buffer.from([byte]));
    expect(await collect(chunks)).toEqual(['{"a":"é€"}', '', '{"b":"😀"}', '{"c":1}']);
  });

  it('refuses bytes that are not UTF-8, naming the line', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"a":1}\n{"b":2}\n{"c":"'),
      Buffer.from([0xe9]),
      Buffer.from('"}\n'),
    ]);
    await expect(collect([bytes])).rejects.toThrow('line 3 is not valid UTF-8');
  });
});

describe('the progress bar', () => {
  it('draws only on a terminal, in place, at most every 100 ms, and erases itself', () => {
    const written: string[] = [];
    let now = 0;
    const bar = progressBar(
      { isTTY: true, write: (text) => written.push(text) },
      'importing',
      () => now,
    );
    bar.update(0, 1000);
    now = 50;
    bar.update(500, 1000); // too soon: skipped
    now = 150;
    bar.update(500, 1000);
    bar.update(1000, 1000); // the last step is always drawn
    bar.end();
    expect(written).toEqual([
      `\r${renderBar('importing', 0, 1000)}`,
      `\r${renderBar('importing', 500, 1000)}`,
      `\r${renderBar('importing', 1000, 1000)}`,
      '\r\x1b[2K',
    ]);
    expect(renderBar('importing', 500, 1000)).toBe(
      `importing [${'#'.repeat(15)}${'.'.repeat(15)}]  50% 500/1000`,
    );

    const piped: string[] = [];
    const silent = progressBar({ isTTY: false, write: (text) => piped.push(text) }, 'importing');
    silent.update(1, 2);
    silent.end();
    expect(piped).toEqual([]);
  });
});

describe('verifying an imported hash', () => {
  it('also spends the dummy verification, right or wrong, so it costs at least an unknown username', async () => {
    let dummies = 0;
    const hasher = withImportedHashes(
      {
        hash: async () => 'unused',
        verify: async () => false,
        verifyDummy: async () => {
          dummies += 1;
          return false;
        },
        pepperOf: () => null,
        peppers: { current: 'unused', previous: [] },
      },
      1,
    );
    const stored = `${IMPORTED_PREFIX}${await FIXTURE_FORMATS.bcrypt_2b!('open sesame')}`;
    expect(await hasher.verify(stored, 'open sesame')).toBe(true);
    expect(await hasher.verify(stored, 'open sesamE')).toBe(false);
    expect(await hasher.verify(`${IMPORTED_PREFIX}not a hash`, 'open sesame')).toBe(false);
    expect(dummies).toBe(3);
  });
});
