import { endpoint } from './call.js';

/** `<baseUrl>/v1/login?return_to=…`: where to send a browser to sign in. */
export function loginPageUrl(baseUrl: string, returnTo?: string): string {
  const url = new URL(endpoint(baseUrl, '/v1/login'));
  if (returnTo !== undefined) url.searchParams.set('return_to', returnTo);
  return url.toString();
}
