import { existsSync } from 'node:fs';
import { build } from 'esbuild';
import type { AddressInfo } from 'node:net';
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type Page,
} from 'playwright-core';
import { describe } from 'vitest';
import { registerIdentity } from '../../src/domain/identities/identity-service.js';
import type { TestApp } from './app.js';
import { PASSWORD } from './core.js';
import { requireSuite } from './databases.js';

/** Debian's chromium: never a browser downloaded at install time. */
const CHROMIUM = '/usr/bin/chromium';

const available = requireSuite(
  'browser',
  existsSync(CHROMIUM),
  `${CHROMIUM} not found (Debian: apt-get install chromium)`,
);

/** `describe` for a suite that needs Chromium: skipped, and saying why, when it is absent. */
export function describeInChromium(title: string, body: () => void): void {
  if (available) describe(title, body);
  else describe.skip(`${title} (skipped: ${CHROMIUM} not found)`, body);
}

/**
 * Headless Chromium with the flags a closed network and a root user need, and one for the
 * suite's CPU: `--disable-site-isolation-trials` lets a tab keep its renderer process when
 * it navigates to another site (127.0.0.1 and localhost, an upstream provider on another
 * port) instead of starting a new one. Chromium was the suite's largest consumer of CPU (313
 * of about 950 s, 228 processes, most of them renderers); with the flag, 269 s and 129
 * processes (process accounting over a full run, 2026-11-29). Site isolation is a defence
 * against a compromised renderer reading another site's memory; what the suites check (CORS,
 * cookies, CSRF, WebAuthn's relying party, frame-ancestors) is enforced by the browser and
 * network processes, which the flag does not change.
 */
function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-site-isolation-trials',
    ],
  });
}

let workerBrowser: Promise<Browser> | undefined;

/**
 * The test worker's Chromium: launched by the first browser suite the worker runs and kept
 * for the next ones (a worker runs its files one after another, and `isolate: false` keeps
 * this module between them). Launching and closing it cost about 1.5 s of CPU on a 2-core
 * machine, which each of the 17 browser files paid (some twice, once per database).
 * Playwright ends it when the worker exits; a browser that died is launched again. A suite
 * gives it back with `releaseChromium`, never `close()`.
 */
export async function sharedChromium(): Promise<Browser> {
  const current = await workerBrowser?.catch(() => undefined);
  if (current?.isConnected()) return current;
  workerBrowser = launchChromium();
  return workerBrowser;
}

/**
 * Ends a suite's use of the shared browser: every context it opened is closed (pages,
 * cookies, virtual authenticators with them), so the next file starts from an empty browser.
 */
export async function releaseChromium(browser: Browser | undefined): Promise<void> {
  if (!browser?.isConnected()) return;
  await Promise.all(browser.contexts().map((context) => context.close().catch(() => undefined)));
}

/** A browser context with its first page, as a fresh one is; `close` ends its use. */
export interface BrowserTab {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/**
 * Tabs reused across a file's tests. Opening a page costs Debian's Chromium about 0.6 s of
 * CPU on a 2-core machine (a renderer process or two, and the browser process's share),
 * where navigating one already open costs about 0.1 s; the suite opened some 200 pages,
 * a quarter of its CPU. A closed tab comes back as a new context with the same options
 * would: no cookies, no other pages, no listeners or routes, on about:blank. A tab whose
 * reset fails is closed instead.
 */
export class TabPool {
  readonly #idle = new Map<string, BrowserTab[]>();

  constructor(private readonly browser: Browser) {}

  async open(options: BrowserContextOptions = {}): Promise<BrowserTab> {
    const key = JSON.stringify(options);
    let idle = this.#idle.get(key);
    if (!idle) this.#idle.set(key, (idle = []));
    const reused = idle.pop();
    if (reused) return reused;
    const context = await this.browser.newContext(options);
    const page = await context.newPage();
    const ownListeners = [listenersOf(context), listenersOf(page)];
    const tab: BrowserTab = {
      context,
      page,
      close: async () => {
        try {
          for (const other of context.pages()) if (other !== page) await other.close();
          for (const own of ownListeners) own.removeAddedSince();
          await context.unrouteAll({ behavior: 'ignoreErrors' });
          await page.unrouteAll({ behavior: 'ignoreErrors' });
          await context.clearCookies();
          await page.goto('about:blank');
          // A second close must not hand one tab to two tests.
          if (!idle.includes(tab)) idle.push(tab);
        } catch {
          await context.close().catch(() => undefined);
        }
      },
    };
    return tab;
  }
}

/** The parts of Playwright's event emitter its typings leave out. */
interface Emitter {
  eventNames(): (string | symbol)[];
  rawListeners(name: string | symbol): unknown[];
  removeListener(name: string | symbol, listener: unknown): void;
}

/**
 * The listeners a test adds to a page or context, removed again without touching
 * Playwright's own (`removeAllListeners` would take the one `close()` waits on with them,
 * and closing that context would then never finish).
 */
function listenersOf(target: BrowserContext | Page) {
  const emitter = target as unknown as Emitter;
  const before = new Set(emitter.eventNames().flatMap((name) => emitter.rawListeners(name)));
  return {
    removeAddedSince(): void {
      for (const name of emitter.eventNames()) {
        for (const listener of emitter.rawListeners(name)) {
          if (!before.has(listener)) emitter.removeListener(name, listener);
        }
      }
    },
  };
}

/** The identity the browser suites sign in as: alice, with PASSWORD. */
export function addAlice(t: TestApp): Promise<unknown> {
  return registerIdentity(
    t.deps,
    { service_name: 'browser-tests', service_id: null },
    { username: 'alice', password: PASSWORD, display_name: 'Alice Example' },
  );
}

/**
 * Starts `t` listening on a free loopback port and answers its origin; `hostname` names the
 * loopback in it (`localhost` where WebAuthn needs a domain name).
 */
export async function listenForBrowser(t: TestApp, hostname = '127.0.0.1'): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://${hostname}:${(t.app.server.address() as AddressInfo).port}`;
}

/** What `fetchInPage` saw: the status and JSON body, or the name of the error it threw. */
export interface PageFetch {
  status?: number;
  body?: unknown;
  failed?: string;
}

/**
 * `fetch` with credentials run inside the page, so the browser applies its own CORS and
 * cookie rules; a fetch the browser refuses answers `failed`.
 */
export function fetchInPage(page: Page, url: string, method = 'GET'): Promise<PageFetch> {
  return page.evaluate(
    async ([target, verb]) => {
      try {
        const res = await fetch(target!, { method: verb, credentials: 'include' });
        const text = await res.text();
        return { status: res.status, body: text ? JSON.parse(text) : null };
      } catch (error) {
        return { failed: (error as Error).name };
      }
    },
    [url, method] as const,
  );
}

/**
 * `@tessera/client/browser` bundled for a page, as an application would ship it: an IIFE
 * defining `TesseraBrowser` (add it with `page.addScriptTag({ content })`).
 */
export async function browserClientBundle(): Promise<string> {
  const bundle = await build({
    entryPoints: ['packages/client/src/browser.ts'],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName: 'TesseraBrowser',
    conditions: ['tessera-source'],
    write: false,
    logLevel: 'silent',
  });
  return bundle.outputFiles[0]!.text;
}
