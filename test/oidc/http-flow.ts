import * as rp from 'openid-client';
import { type Authorization, startAuthorization } from './relying-party.js';

/** A minimal cookie jar: name → value, whatever the path (every request here may send all). */
export class CookieJar {
  readonly #cookies = new Map<string, string>();

  set(name: string, value: string): void {
    this.#cookies.set(name, value);
  }

  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === '')
        this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

async function step(url: string, jar: CookieJar): Promise<Response> {
  const response = await fetch(url, {
    redirect: 'manual',
    headers: { cookie: jar.header(), accept: 'text/html' },
  });
  jar.take(response);
  return response;
}

/**
 * The browser's part of an authorization, without a browser: for a browser whose Tessera
 * session cookie is `sessionToken` (so no login page), and a first-party client (so no
 * consent page). Follows redirects and the interaction's refresh hop to the redirect URI.
 */
export async function authorizeSignedIn(
  config: rp.Configuration,
  redirectUri: string,
  sessionToken: string,
  scope?: string,
): Promise<{ auth: Authorization; landedOn: string }> {
  const auth = await startAuthorization(config, redirectUri, scope);
  const jar = new CookieJar();
  jar.set('service_session', sessionToken);
  let url = auth.url.href;
  for (let hops = 0; hops < 10; hops += 1) {
    if (url.startsWith(redirectUri)) return { auth, landedOn: url };
    const response = await step(url, jar);
    if (response.status === 303 || response.status === 302) {
      url = new URL(response.headers.get('location')!, url).href;
      continue;
    }
    const html = await response.text();
    const refresh = /http-equiv="refresh" content="0;url=([^"]+)"/.exec(html);
    if (response.status !== 200 || !refresh) {
      throw new Error(`authorization stopped at ${url}: ${response.status} ${html.slice(0, 200)}`);
    }
    url = new URL(refresh[1]!.replaceAll('&amp;', '&'), url).href;
  }
  throw new Error('authorization did not reach the redirect URI');
}
