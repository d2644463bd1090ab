import UAParser from 'ua-parser-js';

/** A session's device as the lists show it: browser and operating system, when recognised. */
export interface DeviceDescription {
  /** Name and major version, such as `Chrome 130`; null when not recognised. */
  browser: string | null;
  /** Name and version, such as `iOS 17.4` or `Linux`; null when not recognised. */
  os: string | null;
}

const MAX_CACHED = 256;
const cache = new Map<string, DeviceDescription>();

/**
 * Parses a stored User-Agent with ua-parser-js 1.x (MIT; 2.x is AGPL). Lists repeat the
 * same few strings (one user, a handful of devices), so recent answers are kept.
 */
export function describeUserAgent(userAgent: string | null): DeviceDescription {
  if (userAgent === null) return { browser: null, os: null };
  const known = cache.get(userAgent);
  if (known) return known;
  const parser = new UAParser(userAgent);
  const browser = parser.getBrowser();
  const os = parser.getOS();
  const described = {
    browser: joined(browser.name, browser.major),
    os: joined(os.name, os.version),
  };
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
  cache.set(userAgent, described);
  return described;
}

function joined(name: string | undefined, version: string | undefined): string | null {
  if (!name) return null;
  return version ? `${name} ${version}` : name;
}
