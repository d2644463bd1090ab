import { HOSTILE, RAW_PATH_IDS, encodeUtf8 } from './hostile.js';
import type { Rng } from './rng.js';

/**
 * A request in symbolic form: `{{name}}` stands for a per-app value (tokens, ids) that
 * `resolve` fills in, so one generated request is put to every database identically.
 */
export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export const PLACEHOLDERS = ['all', 'weak', 'session', 'identity', 'flow', 'csrf'] as const;
export type Placeholders = Record<(typeof PLACEHOLDERS)[number], string>;

export function resolve(request: FuzzRequest, values: Placeholders): FuzzRequest {
  const fill = (text: string) =>
    text.replace(/\{\{(\w+)\}\}/g, (whole, name: string) =>
      name in values ? values[name as keyof Placeholders] : whole,
    );
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name] = fill(value);
  return {
    method: request.method,
    url: fill(request.url),
    headers,
    body: typeof request.body === 'string' ? fill(request.body) : request.body,
  };
}

type Field =
  | 'username'
  | 'password'
  | 'display_name'
  | 'avatar_url'
  | 'token'
  | 'session_id'
  | 'provider'
  | 'subject'
  | 'seed'
  | 'verified'
  | 'csrf_token';

interface Route {
  method: string;
  /** `{id}` is an identity id, `{flow}` a flow id. */
  path: string;
  fields?: Field[];
  query?: string[];
  service?: boolean;
}

const PROFILE: Field[] = ['display_name', 'avatar_url'];
const REGISTER: Field[] = ['username', 'password', 'display_name', 'avatar_url'];
const LINK: Field[] = ['provider', 'subject'];

/** Every route the service answers (docs/api.md 3 and the browser and operations endpoints). */
export const ROUTES: Route[] = [
  { method: 'GET', path: '/healthz' },
  { method: 'GET', path: '/readyz' },
  { method: 'GET', path: '/metrics' },
  { method: 'GET', path: '/v1/openapi.json' },
  { method: 'GET', path: '/v1/identities/{id}', service: true },
  { method: 'GET', path: '/v1/identities', query: ['username'], service: true },
  { method: 'PATCH', path: '/v1/identities/{id}/profile', fields: PROFILE, service: true },
  { method: 'PATCH', path: '/v1/identities/{id}', fields: PROFILE, service: true },
  { method: 'POST', path: '/v1/identities/{id}/revoke-sessions', service: true },
  { method: 'POST', path: '/v1/sessions/verify', fields: ['token'], service: true },
  { method: 'POST', path: '/v1/sessions/revoke', fields: ['session_id', 'token'], service: true },
  { method: 'POST', path: '/v1/register', fields: REGISTER, service: true },
  { method: 'POST', path: '/v1/register-and-authenticate', fields: REGISTER, service: true },
  {
    method: 'POST',
    path: '/v1/authenticate/password',
    fields: ['username', 'password'],
    service: true,
  },
  { method: 'POST', path: '/v1/authenticate/link', fields: [...LINK, 'seed'], service: true },
  {
    method: 'POST',
    path: '/v1/identities/{id}/links',
    fields: [...LINK, 'verified'],
    service: true,
  },
  { method: 'GET', path: '/v1/identities/{id}/links', service: true },
  { method: 'DELETE', path: '/v1/identities/{id}/links', fields: LINK, service: true },
  { method: 'GET', path: '/v1/login', query: ['return_to'] },
  { method: 'GET', path: '/v1/flows/{flow}' },
  {
    method: 'POST',
    path: '/v1/flows/{flow}/password',
    fields: ['username', 'password', 'csrf_token'],
  },
  { method: 'GET', path: '/v1/whoami' },
  { method: 'POST', path: '/v1/logout' },
  { method: 'OPTIONS', path: '/v1/whoami' },
  { method: 'OPTIONS', path: '/v1/flows/{flow}/password' },
];

const METHODS = [
  'GET',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'HEAD',
  'OPTIONS',
  'TRACE',
  'PROPFIND',
  'SEARCH',
];

const JUNK_PATHS = [
  '/',
  '/v1',
  '/v1/',
  '/v2/whoami',
  '/V1/WHOAMI',
  '/v1/whoami/',
  '//v1/whoami',
  '/v1//identities',
  '/v1/%ff',
  '/v1/identities/{id}/unknown',
  '/v1/./whoami',
  '/v1/../v1/whoami',
  '/v1/whoami;x=1',
  '/v1/whoami%00',
  '/v1/%2e%2e/healthz',
  '/favicon.ico',
  '/.env',
  '/v1/flows/{flow}/password/extra',
  `/v1/${'a'.repeat(300)}`,
];

const UNKNOWN_UUID = '0190c7f8-0000-7000-8000-000000000000';
const UNKNOWN_FLOW = `tess_f_${'A'.repeat(43)}`;

const HOSTILE_VALUES = HOSTILE.map(([, value]) => value);

function randomText(rng: Rng, max: number): string {
  const alphabet = [
    'a',
    'Z',
    '0',
    ' ',
    '%',
    '"',
    '\\',
    '/',
    '\u0000',
    '\u00e9',
    '\u20ac',
    '\u{1f600}',
    '\ud800',
    '\u202e',
    '\n',
  ];
  let text = '';
  const length = rng.int(max);
  for (let i = 0; i < length; i += 1) text += rng.pick(alphabet);
  return text;
}

function pathId(rng: Rng, kind: 'id' | 'flow'): string {
  const roll = rng.next();
  if (roll < 0.4) return kind === 'id' ? '{{identity}}' : '{{flow}}';
  if (roll < 0.55) return kind === 'id' ? UNKNOWN_UUID : UNKNOWN_FLOW;
  if (roll < 0.75) return encodeUtf8(rng.pick(HOSTILE_VALUES));
  if (roll < 0.9) return rng.pick(RAW_PATH_IDS)[1];
  return Array.from(
    { length: 1 + rng.int(6) },
    () => `%${rng.int(256).toString(16).padStart(2, '0')}`,
  ).join('');
}

/** A value for `field`: usually plausible, often hostile, sometimes of the wrong type. */
function fieldValue(rng: Rng, field: Field, clean: boolean): unknown {
  const roll = clean ? 1 : rng.next();
  if (roll < 0.15) return rng.pick([null, 0, -1, 1.5, true, [], {}, ['x'], { a: 1 }, 1e308]);
  if (roll < 0.4) return rng.pick(HOSTILE_VALUES);
  if (roll < 0.45) return randomText(rng, 40);
  switch (field) {
    case 'username':
      return rng.pick(['fuzz-base', 'FUZZ-BASE', `fuzz${rng.int(50)}`, 'ｆｕｚｚ１', 'ab']);
    case 'password':
      return rng.pick(['correct horse battery', 'wrong password', 'short']);
    case 'display_name':
      return rng.pick(['Fuzz Name', ' padded ', '\u{1f600}']);
    case 'avatar_url':
      return rng.pick(['https://img.example/a.png', 'http://x.example/', 'ftp://x', null]);
    case 'token':
      return rng.pick(['{{session}}', `tess_s_${'A'.repeat(43)}`, '{{all}}']);
    case 'session_id':
      return rng.pick([UNKNOWN_UUID, 'not-a-uuid', '{{identity}}']);
    case 'provider':
      return rng.pick(['github', 'email', '€'.repeat(86)]);
    case 'subject':
      return `s-${rng.int(30)}`;
    case 'seed':
      return rng.chance(0.7)
        ? { username: `seed${rng.int(40)}`, display_name: 'Seeded' }
        : rng.pick([
            {},
            { username: 'x' },
            'seed',
            { username: 'abc', display_name: 'A', extra: 1 },
          ]);
    case 'verified':
      return rng.pick([true, false]);
    case 'csrf_token':
      return rng.pick(['{{csrf}}', 'wrong']);
  }
}

function jsonBody(rng: Rng, fields: Field[], clean: boolean): string {
  const roll = clean ? 1 : rng.next();
  if (roll < 0.1) return JSON.stringify(rng.pick([[], 'text', 42, null, true, [{}]]));
  if (roll < 0.14) return `${'['.repeat(2000)}${']'.repeat(2000)}`;
  if (roll < 0.17) return `${'{"a":'.repeat(500)}1${'}'.repeat(500)}`;
  if (roll < 0.24) {
    return rng.pick([
      '{"username": "a',
      '{,}',
      "{'a': 1}",
      '{"a": NaN}',
      '{"a": 1,}',
      '/* c */ {}',
      '{"__proto__": {"admin": true}}',
      '{"constructor": {"prototype": {"admin": true}}}',
      '\ufeff{}',
      '{"a": "\\ud800"}',
      '{"a": "\\u0000"}',
      '{"a": 1e999999}',
      '{"username": "x", "username": "y"}',
    ]);
  }
  if (roll < 0.28) return JSON.stringify({ pad: 'x'.repeat(70_000) });
  const body: Record<string, unknown> = {};
  for (const field of fields) {
    if (clean || !rng.chance(0.15)) body[field] = fieldValue(rng, field, clean);
  }
  if (!clean && rng.chance(0.1))
    body[rng.pick(['admin', 'state', 'id', 'username', '__proto__'])] = 1;
  return JSON.stringify(body);
}

function formBody(rng: Rng, fields: Field[], clean: boolean): string {
  const params = new URLSearchParams();
  for (const field of fields) {
    const value = fieldValue(rng, field, clean);
    if (value !== undefined) params.append(field, String(value));
  }
  if (rng.chance(0.2)) params.append(rng.pick(fields.length ? fields : ['x']), 'duplicate');
  const text = params.toString();
  return rng.chance(0.1) ? `${text}&%ff=%zz&&=` : text;
}

const CONTENT_TYPES = [
  'application/json; charset=utf-8',
  'application/JSON',
  'application/x-www-form-urlencoded',
  'text/plain',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json; charset=latin1',
  'garbage',
  'application/vnd.api+json',
  'application/json, text/html',
];

const AUTHORIZATIONS = [
  'Bearer',
  'Bearer ',
  'Basic dXNlcjpwYXNz',
  `Bearer tess_svc_${'A'.repeat(43)}`,
  'bearer {{all}}',
  'Bearer {{all}} extra',
  'Bearer {{session}}',
  'Bearer  {{all}}',
  `Bearer ${'x'.repeat(5000)}`,
  'Bearer tess_svc_\u00e9\u00e9',
];

function headersFor(rng: Rng, route: Route | undefined, hasBody: boolean): Record<string, string> {
  const headers: Record<string, string> = {};
  const roll = rng.next();
  const service = route?.service ?? false;
  if (roll < (service ? 0.65 : 0.1)) headers.authorization = 'Bearer {{all}}';
  else if (roll < (service ? 0.75 : 0.15)) headers.authorization = 'Bearer {{weak}}';
  else if (roll < (service ? 0.85 : 0.2)) headers.authorization = rng.pick(AUTHORIZATIONS);
  if (hasBody) {
    const type = rng.next();
    // The flow route is the browser's: half its bodies come as the hosted form sends them.
    if (route?.path.endsWith('/password') && type < 0.5) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      if (rng.chance(0.7)) headers.accept = 'text/html';
    } else if (type < 0.6) headers['content-type'] = 'application/json';
    else if (type < 0.95) headers['content-type'] = rng.pick(CONTENT_TYPES);
  }
  if (headers.accept === undefined && rng.chance(0.3)) {
    headers.accept = rng.pick([
      'text/html',
      '*/*',
      'application/json',
      'text/html;q=0.1, application/json',
      'garbage;q=x',
    ]);
  }
  if (rng.chance(0.15)) {
    headers.origin = rng.pick([
      'https://app.example',
      'https://evil.example',
      'null',
      'http://localhost:80',
    ]);
  }
  if (rng.chance(0.2)) {
    headers.cookie = rng.pick([
      'service_session={{session}}',
      'service_session=garbage',
      `service_session=${'a'.repeat(4000)}`,
      'service_session=%ff%00',
      'service_session={{session}}; service_session=x',
      '=; ;;',
    ]);
  }
  if (rng.chance(0.1)) {
    headers['x-service-client-ip'] = rng.pick([
      '203.0.113.7',
      '::1',
      'garbage',
      '1.2.3.4, 5.6.7.8',
      ' 10.0.0.1 ',
      'fe80::1%eth0',
      '',
    ]);
  }
  if (rng.chance(0.05)) headers['x-request-id'] = rng.pick(['abc', 'x'.repeat(500), '\u00ff']);
  return headers;
}

function fillPath(rng: Rng, template: string): string {
  return template
    .replace('{id}', () => pathId(rng, 'id'))
    .replace('{flow}', () => pathId(rng, 'flow'));
}

function queryFor(rng: Rng, route: Route | undefined): string {
  const params: string[] = [];
  for (const name of route?.query ?? []) {
    if (rng.chance(0.15)) continue;
    const roll = rng.next();
    let value: string;
    if (roll < 0.3)
      value = name === 'username' ? 'fuzz-base' : encodeURIComponent('https://app.example/after');
    else if (roll < 0.7) value = encodeUtf8(rng.pick(HOSTILE_VALUES));
    else value = rng.pick(['%ff', '%ED%A0%80', '%', '%00', 'a+b', '']);
    params.push(`${name}=${value}`);
    if (rng.chance(0.1)) params.push(`${name}=again`);
  }
  if (rng.chance(0.1)) params.push(rng.pick(['x=1', '%ff', '&&', 'a[b]=c', '__proto__=1']));
  return params.length ? `?${params.join('&')}` : rng.chance(0.05) ? '?' : '';
}

/** The `index`-th request of the run: a pure function of the generator's state. */
export function generateRequest(rng: Rng): FuzzRequest {
  const route = rng.chance(0.9) ? rng.pick(ROUTES) : undefined;
  const method = route && rng.chance(0.8) ? route.method : rng.pick(METHODS);
  const path = fillPath(rng, route?.path ?? rng.pick(JUNK_PATHS));
  const url = path + queryFor(rng, route);
  const wantsBody = route?.fields !== undefined || rng.chance(0.1);
  const hasBody = wantsBody && !['GET', 'HEAD'].includes(method) && !rng.chance(0.05);
  const headers = headersFor(rng, route, hasBody);
  if (!hasBody) return { method, url, headers };
  const fields = route?.fields ?? [];
  const type = headers['content-type'] ?? '';
  // A share of plausible bodies, so the success paths (and what they store) are reached.
  const clean = rng.chance(0.3);
  let body: string | Buffer;
  const shape = rng.next();
  if (shape < 0.04) body = Buffer.from(Array.from({ length: rng.int(64) }, () => rng.int(256)));
  else if (shape < 0.08) body = '';
  else if (type.includes('form-urlencoded')) body = formBody(rng, fields, clean);
  else body = jsonBody(rng, fields, clean);
  return { method, url, headers, body };
}

/** Routes that answer a browser with the hosted page rather than JSON. */
export function mayAnswerWithPage(method: string, url: string): boolean {
  const path = url.split('?')[0]!;
  return (
    (method === 'GET' && path === '/v1/login') ||
    (method === 'POST' && /^\/v1\/flows\/[^/]*\/password$/.test(path))
  );
}

const FORM_TYPES =
  /^\s*(application\/x-www-form-urlencoded|multipart\/form-data|text\/plain)\s*(;|$)/i;

/**
 * A form post to a flow's password route: whatever goes wrong, a browser gets the hosted
 * page, never a JSON document (docs/browser-sign-in.md).
 */
export function mustAnswerWithPage(request: FuzzRequest): boolean {
  const match = /^\/v1\/flows\/([^/?]+)\/password(\?|$)/.exec(request.url);
  const type = request.headers['content-type'];
  return (
    request.method === 'POST' &&
    match !== null &&
    !['.', '..', '%2e%2e', '%2E%2E'].includes(match[1]!) &&
    type !== undefined &&
    FORM_TYPES.test(type)
  );
}
