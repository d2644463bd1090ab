import {
  PROVIDER_TYPES,
  type ProviderSettings,
  type ProviderType,
} from './domain/providers/provider-settings.js';

type Env = Record<string, string | undefined>;

/** A providers file that cannot be used; the message names the provider and the field. */
export class ProvidersFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProvidersFileError';
  }
}

const ID = /^[a-z0-9][a-z0-9_-]{0,39}$/;
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

const LABELS: Record<Exclude<ProviderType, 'oidc'>, string> = {
  google: 'Google',
  microsoft: 'Microsoft',
  apple: 'Apple',
  gitlab: 'GitLab',
  github: 'GitHub',
};

const OIDC_SCOPES = ['openid', 'email', 'profile'];
const DEFAULT_SCOPES: Record<ProviderType, readonly string[]> = {
  oidc: OIDC_SCOPES,
  google: OIDC_SCOPES,
  microsoft: OIDC_SCOPES,
  gitlab: OIDC_SCOPES,
  // Apple gives a name only on the first consent and only through form fields; the subject
  // and the address are all Tessera keeps.
  apple: ['openid', 'email'],
  // GitHub is OAuth 2 without OpenID Connect: the profile and the verified addresses come
  // from its API (GET /user, GET /user/emails).
  github: ['read:user', 'user:email'],
};

/**
 * Whether a provider's word that an address is verified is taken by default. Microsoft's
 * `email` claim is whatever the tenant's administrator typed (the "nOAuth" takeovers), and
 * a generic issuer is unknown: both false until the entry says `trust_email: true`.
 */
const TRUSTS_EMAIL: Record<ProviderType, boolean> = {
  oidc: false,
  google: true,
  microsoft: false,
  apple: true,
  gitlab: true,
  github: true,
};

const FIELDS: Record<ProviderType, readonly string[]> = {
  oidc: ['issuer', 'client_secret_env'],
  google: ['client_secret_env'],
  microsoft: ['tenant', 'client_secret_env'],
  apple: ['team_id', 'key_id', 'private_key_env'],
  gitlab: ['base_url', 'client_secret_env'],
  github: ['base_url', 'client_secret_env'],
};
const COMMON_FIELDS = ['id', 'type', 'label', 'client_id', 'scopes', 'trust_email'];

/**
 * The providers of `SERVICE_PROVIDERS_FILE` (docs/providers.md), from the file's text and
 * the environment its entries name their secrets in. Every refusal names the provider and
 * the field.
 */
export function parseProvidersFile(text: string, env: Env): ProviderSettings[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new ProvidersFileError(`not JSON (${(error as Error).message})`);
  }
  if (!isObject(document) || !Array.isArray(document.providers)) {
    throw new ProvidersFileError('expected {"providers": [...]}');
  }
  const unknown = Object.keys(document).find((key) => key !== 'providers');
  if (unknown !== undefined) throw new ProvidersFileError(`unknown field "${unknown}"`);
  const seen = new Set<string>();
  return document.providers.map((entry, index) => {
    const settings = parseEntry(entry, index, env);
    if (seen.has(settings.id)) {
      throw new ProvidersFileError(`provider "${settings.id}": id is used twice`);
    }
    seen.add(settings.id);
    return settings;
  });
}

function parseEntry(entry: unknown, index: number, env: Env): ProviderSettings {
  if (!isObject(entry)) throw new ProvidersFileError(`providers[${index}] must be an object`);
  const id = entry.id;
  if (typeof id !== 'string' || !ID.test(id)) {
    throw new ProvidersFileError(
      `providers[${index}]: id must be 1-40 lowercase letters, digits, "-" or "_", starting with a letter or digit`,
    );
  }
  const fail = (field: string, problem: string): never => {
    throw new ProvidersFileError(`provider "${id}": ${field} ${problem}`);
  };
  const type = entry.type;
  if (typeof type !== 'string' || !(PROVIDER_TYPES as readonly string[]).includes(type)) {
    return fail('type', `must be one of ${PROVIDER_TYPES.join(', ')}`);
  }
  const kind = type as ProviderType;
  const allowed = [...COMMON_FIELDS, ...FIELDS[kind]];
  const extra = Object.keys(entry).find((key) => !allowed.includes(key));
  if (extra !== undefined) fail(extra, `is not a field of a "${kind}" provider`);

  const text = (field: string, required: boolean): string | null => {
    const value = entry[field];
    if (value === undefined && !required) return null;
    if (typeof value !== 'string' || value.trim() === '')
      return fail(field, 'must be a non-empty string');
    return value.trim();
  };
  const secretFrom = (field: string): string => {
    const name = text(field, true)!;
    if (!ENV_NAME.test(name)) return fail(field, 'must name an environment variable');
    const value = env[name];
    if (value === undefined || value.trim() === '') {
      return fail(field, `names ${name}, which is not set`);
    }
    return value.trim();
  };
  const location = (field: string, fallback: string | null): string | null => {
    const value = text(field, fallback === null);
    if (value === null) return fallback;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return fail(field, 'must be an absolute URL');
    }
    const plainOk = url.protocol === 'http:' && LOOPBACK.has(url.hostname);
    if (url.protocol !== 'https:' && !plainOk) {
      return fail(field, 'must be an https URL (http only on a loopback host)');
    }
    if (url.search || url.hash) fail(field, 'must have no query or fragment');
    return url.href.replace(/\/$/, '');
  };

  const label =
    entry.label === undefined ? (kind === 'oidc' ? id : LABELS[kind]) : text('label', true)!;
  if (label.length > 64) fail('label', 'must be at most 64 characters');
  const clientId = text('client_id', true)!;
  const scopes = parseScopes(entry.scopes, kind, fail);
  const trust = entry.trust_email;
  if (trust !== undefined && typeof trust !== 'boolean')
    fail('trust_email', 'must be true or false');

  let issuer: string | null = null;
  let baseUrl: string | null = null;
  switch (kind) {
    case 'oidc':
      issuer = location('issuer', null);
      break;
    case 'google':
      issuer = 'https://accounts.google.com';
      break;
    case 'microsoft': {
      const tenant = text('tenant', true)!;
      // The ID token's issuer names the tenant's id: a domain name or `common` would have
      // no issuer to check tokens against.
      if (!GUID.test(tenant)) fail('tenant', 'must be the directory (tenant) id, a GUID');
      issuer = `https://login.microsoftonline.com/${tenant.toLowerCase()}/v2.0`;
      break;
    }
    case 'apple':
      issuer = 'https://appleid.apple.com';
      break;
    case 'gitlab':
      baseUrl = location('base_url', 'https://gitlab.com');
      issuer = baseUrl;
      break;
    case 'github':
      baseUrl = location('base_url', 'https://github.com');
      break;
  }
  const appleKey =
    kind === 'apple'
      ? {
          teamId: text('team_id', true)!,
          keyId: text('key_id', true)!,
          privateKey: secretFrom('private_key_env'),
        }
      : null;
  return {
    id,
    type: kind,
    label,
    clientId,
    clientSecret: kind === 'apple' ? null : secretFrom('client_secret_env'),
    scopes,
    issuer,
    baseUrl,
    appleKey,
    trustEmail: typeof trust === 'boolean' ? trust : TRUSTS_EMAIL[kind],
    allowHttp: [issuer, baseUrl].some((at) => at !== null && at.startsWith('http:')),
  };
}

function parseScopes(
  value: unknown,
  kind: ProviderType,
  fail: (field: string, problem: string) => never,
): readonly string[] {
  if (value === undefined) return DEFAULT_SCOPES[kind];
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    !value.every((scope) => typeof scope === 'string' && /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope))
  ) {
    return fail('scopes', 'must be a non-empty array of scope names');
  }
  if (kind !== 'github' && !value.includes('openid')) fail('scopes', 'must include "openid"');
  return value as string[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
