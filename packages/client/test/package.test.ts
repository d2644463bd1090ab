import { readFileSync } from 'node:fs';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { createTesseraClient } from '@tessera/client';
import { staleClientFiles } from '../../../scripts/client-generate.js';

const PACKAGE = new URL('..', import.meta.url).pathname;

describe('the client package', () => {
  it('has generated files matching what the server serves now', async () => {
    const stale = await staleClientFiles();
    expect(
      stale,
      `stale generated client files: ${stale.join(', ')}; run \`npm run client:generate\` and commit the result`,
    ).toEqual([]);
  });

  it('has a method for every service endpoint (operationId) in the document', () => {
    const document = JSON.parse(readFileSync(`${PACKAGE}/openapi.json`, 'utf8')) as {
      paths: Record<
        string,
        Record<string, { operationId: string; security?: Record<string, unknown>[] }>
      >;
    };
    const service = Object.values(document.paths)
      .flatMap((item) => Object.values(item))
      .filter((op) => op.security?.some((requirement) => 'serviceToken' in requirement))
      .map((op) => op.operationId);
    expect(service.length).toBeGreaterThan(10);
    const client = createTesseraClient({ baseUrl: 'http://127.0.0.1:9' }) as unknown as Record<
      string,
      unknown
    >;
    const missing = service.filter((id) => typeof client[id] !== 'function');
    expect(
      missing,
      `add a method to packages/client/src/client.ts for: ${missing.join(', ')}`,
    ).toEqual([]);
  });

  it('bundles its browser entry for the browser with nothing Node-only', async () => {
    const result = await build({
      entryPoints: [`${PACKAGE}/src/browser.ts`],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      target: 'es2022',
      conditions: ['tessera-source'],
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(
      inputs.filter((input) => input.startsWith('node:') || input.includes('/node_modules/undici')),
    ).toEqual([]);
    expect(inputs.some((input) => input.includes('openapi-fetch'))).toBe(true);
    const code = result.outputFiles[0]!.text;
    expect(code).not.toMatch(/\bfrom\s*["']node:|require\(["']node:|\bprocess\.env\b/);
  });
});
