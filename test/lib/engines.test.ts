import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;

describe('engines', () => {
  // `engines` is a promise to users: the oldest Node it admits must run every locked package,
  // or `npm ci` on that Node installs something that refuses it.
  it('the oldest Node that package.json admits satisfies every locked package', () => {
    const own = (read('package.json').engines as { node: string }).node;
    const oldest = semver.minVersion(own);
    expect(oldest).not.toBeNull();
    const packages = read('package-lock.json').packages as Record<
      string,
      { engines?: { node?: string } }
    >;
    const refusing = Object.entries(packages)
      .filter(([path, entry]) => path !== '' && entry.engines?.node !== undefined)
      .filter(([, entry]) => !semver.satisfies(oldest!, entry.engines!.node!))
      .map(([path, entry]) => `${path} wants ${entry.engines!.node}`);
    expect(refusing).toEqual([]);
  });
});
