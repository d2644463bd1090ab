import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TesseraError, createTesseraClient } from '@tessera/client';
import { childEnv } from '../../../test/helpers/cli.js';
import {
  browserClientBundle,
  describeInChromium,
  sharedChromium,
  releaseChromium,
} from '../../../test/helpers/chromium.js';
import {
  startTessera,
  type TesseraProcess,
} from '../../../packages/client/test/tessera-process.js';

const PASSWORD = 'correct horse battery staple';
const SCREENSHOTS = 'test-results';

/** A port nobody listens on now: Tessera must know the app's origin before the app starts. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The example started as its README says (`npm start` runs this command), beside Tessera. */
function startExample(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--conditions=tessera-source', '--import', 'tsx', 'src/server.ts'],
    { cwd: 'examples/express-app', env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('example app on')) resolve(child);
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`example exited ${code}: ${output}`)));
  });
}

describeInChromium('the Express example app, signed in through Tessera in Chromium', () => {
  let tessera: TesseraProcess;
  let example: ChildProcess;
  let appUrl: string;
  let browser: Browser;

  beforeAll(async () => {
    const port = await freePort();
    appUrl = `http://127.0.0.1:${port}`;
    tessera = await startTessera({
      SERVICE_RETURN_TO_ALLOWED: appUrl,
      SERVICE_SESSION_CORS_ORIGINS: appUrl,
    });
    await createTesseraClient({
      baseUrl: tessera.url,
      serviceToken: tessera.serviceToken,
      acceptLegacyTokens: tessera.legacyTokens,
    }).register({ username: 'alice', password: PASSWORD, display_name: 'Alice Example' });
    [example, browser] = await Promise.all([
      startExample({
        PORT: String(port),
        TESSERA_URL: tessera.url,
        TESSERA_ACCEPT_LEGACY_TOKENS: String(tessera.legacyTokens),
      }),
      sharedChromium(),
    ]);
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await releaseChromium(browser);
    example?.kill('SIGTERM');
    await tessera?.stop();
  });

  it('sends the user to the hosted login page, shows who they are, and logs them out', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${appUrl}/`);
    expect(await page.locator('#signed-out').textContent()).toBe('You are not signed in.');

    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.href.startsWith(`${tessera.url}/v1/login`));
    expect(await page.title()).toBe('Sign in · Tessera');
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();

    await page.waitForURL(`${appUrl}/`);
    expect(await page.locator('#display-name').textContent()).toBe('Alice Example');
    expect(await page.locator('#username').textContent()).toBe('alice');
    await page.screenshot({ path: `${SCREENSHOTS}/example-app.png`, fullPage: true });
    const token = (await context.cookies(appUrl)).find((c) => c.name === 'service_session')!.value;

    // The browser entry of the client, bundled for the browser, asks whoami from this page.
    await page.addScriptTag({ content: await browserClientBundle() });
    const fromBrowser = await page.evaluate(async (baseUrl) => {
      const { createBrowserClient } = (
        globalThis as unknown as { TesseraBrowser: typeof import('@tessera/client/browser') }
      ).TesseraBrowser;
      return (await createBrowserClient({ baseUrl }).whoami()).identity.username;
    }, tessera.url);
    expect(fromBrowser).toBe('alice');

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(`${appUrl}/`);
    expect(await page.locator('#signed-out').textContent()).toBe('You are not signed in.');
    expect((await context.cookies(appUrl)).map((c) => c.name)).not.toContain('service_session');
    // Revoked at Tessera, not merely forgotten by the browser.
    const client = createTesseraClient({ baseUrl: tessera.url, acceptLegacyTokens: true });
    const error = await client.whoami(token).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TesseraError);
    expect((error as TesseraError).code).toBe('invalid_token');

    // A protected page sends a signed-out browser to the login page, coming back there.
    await page.goto(`${appUrl}/account`);
    await page.waitForURL((url) => url.href.startsWith(`${tessera.url}/v1/login`));
    expect(new URL(page.url()).searchParams.get('return_to')).toBe(`${appUrl}/account`);
    await context.close();
  });
});
