import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { describe } from 'vitest';
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

/** Headless Chromium with the flags a closed network and a root user need. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}
