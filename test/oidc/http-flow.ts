import * as rp from 'openid-client';
import { type Authorization, startAuthorization } from './relying-party.js';

/** A minimal cookie jar: name → value, whatever the path (every request here may send all). */
export class CookieJar {
  readonly #cookies = new Map<string, string>();

  set(name: string, value: string): void {
    this.#cookies.set(name, value);
  }

  delete(name: string): void {
    this.#cookies.delete(name);
  }

  names(): string[] {
    return [...this.#cookies.keys()];
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

async function step(url: string, jar: CookieJar, form?: URLSearchParams): Promise<Response> {
  const response = await fetch(url, {
    redirect: 'manual',
    method: form ? 'POST' : 'GET',
    headers: {
      cookie: jar.header(),
      accept: 'text/html',
      ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(form ? { body: form.toString() } : {}),
  });
  jar.take(response);
  return response;
}

/** An auto-submitting form (the provider's form_post pages): its action and fields. */
function autoSubmitForm(html: string): { action: string; fields: URLSearchParams } | null {
  if (!html.includes('document.forms[0].submit()')) return null;
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  if (!action) return null;
  const fields = new URLSearchParams();
  for (const [, name, value] of html.matchAll(
    /<input type="hidden" name="([^"]+)" value="([^"]*)"/g,
  )) {
    fields.append(name!, value!);
  }
  return { action, fields };
}

/**
 * The browser's part of an authorization, without a browser: for a browser whose Tessera
 * session cookie is `sessionToken` (so no login page), and a first-party client (so no
 * consent page). Follows redirects, the interaction's refresh hop and the provider's
 * auto-submitted forms to the redirect URI.
 */
export async function authorizeSignedIn(
  config: rp.Configuration,
  redirectUri: string,
  sessionToken: string | null,
  scope?: string,
  jar = new CookieJar(),
  extra: Record<string, string> = {},
): Promise<{ auth: Authorization; landedOn: string }> {
  const auth = await startAuthorization(config, redirectUri, scope, extra);
  if (sessionToken === null) jar.delete('service_session');
  else jar.set('service_session', sessionToken);
  let url = auth.url.href;
  let form: URLSearchParams | undefined;
  for (let hops = 0; hops < 12; hops += 1) {
    if (url.startsWith(redirectUri)) return { auth, landedOn: url };
    const response = await step(url, jar, form);
    form = undefined;
    if (response.status === 303 || response.status === 302) {
      url = new URL(response.headers.get('location')!, url).href;
      continue;
    }
    const html = await response.text();
    const submit = response.status === 200 ? autoSubmitForm(html) : null;
    if (submit) {
      url = new URL(submit.action, url).href;
      form = submit.fields;
      continue;
    }
    const refresh = /http-equiv="refresh" content="0;url=([^"]+)"/.exec(html);
    if (response.status !== 200 || !refresh) {
      throw new Error(`authorization stopped at ${url}: ${response.status} ${html.slice(-500)}`);
    }
    url = new URL(refresh[1]!.replaceAll('&amp;', '&'), url).href;
  }
  throw new Error('authorization did not reach the redirect URI');
}
