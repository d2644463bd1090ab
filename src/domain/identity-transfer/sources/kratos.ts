import { validationError } from '../../errors.js';
import {
  entry,
  expectArray,
  isObject,
  requireArgs,
  type Source,
  type SourceUser,
  text,
  time,
} from './source.js';

/**
 * Ory Kratos: the admin API's identities (`GET /admin/identities?include_credential=password
 * &include_credential=oidc`, or `kratos list identities --format json`), a JSON array, or
 * the `{"identities": [...]}` page some clients print.
 */
export const kratos: Source = {
  usage: 'the identities JSON (GET /admin/identities with include_credential=password and oidc)',
  async read(args, inputs) {
    requireArgs(args, 1, 1, 'one file: identities.json');
    const document = await inputs.json(args[0]!);
    const identities = expectArray(
      isObject(document) && 'identities' in document ? document.identities : document,
      'the Kratos export (a JSON array of identities)',
    );
    return identities.map((identity, index) => {
      const id =
        isObject(identity) && typeof identity.id === 'string' ? ` (id ${identity.id})` : '';
      return entry(`identities[${index}]${id}`, () => kratosUser(identity));
    });
  },
};

/** Second factors Kratos may list among credentials, by the name the summary gives them. */
const FACTORS: Record<string, string> = {
  totp: 'totp',
  lookup_secret: 'recovery_codes',
  webauthn: 'webauthn',
  passkey: 'passkey',
};

function kratosUser(identity: unknown): SourceUser {
  if (!isObject(identity)) throw validationError('an identity must be a JSON object');
  const traits = isObject(identity.traits) ? identity.traits : {};
  const credentials = isObject(identity.credentials) ? identity.credentials : {};
  const addresses = Array.isArray(identity.verifiable_addresses)
    ? identity.verifiable_addresses.filter(isObject)
    : [];
  const email = text(traits, 'email') ?? addresses.map((a) => text(a, 'value')).find(Boolean);
  const verified = addresses.some(
    (address) =>
      address.verified === true &&
      typeof address.value === 'string' &&
      address.value.toLowerCase() === email?.toLowerCase(),
  );
  const password = isObject(credentials.password) ? credentials.password : undefined;
  const config = password && isObject(password.config) ? password.config : {};
  const hash = text(config, 'hashed_password');
  return {
    username: text(traits, 'username') ?? null,
    line: {
      id: text(identity, 'id'),
      display_name: displayName(traits.name),
      email,
      email_verified: verified,
      state: identity.state === 'inactive' ? 'disabled' : 'active',
      created_at: time(identity, 'created_at'),
      password_hash: hash,
      links: oidcLinks(credentials.oidc),
    },
    factors: Object.keys(credentials).flatMap((kind) => (FACTORS[kind] ? [FACTORS[kind]] : [])),
    notes:
      password && hash === undefined
        ? ['password not in the export (list identities with include_credential=password)']
        : [],
  };
}

/** The name trait, a string or `{first, last}` in Kratos's example schemas. */
function displayName(name: unknown): string | undefined {
  if (typeof name === 'string') return name;
  if (!isObject(name)) return undefined;
  const parts = [name.first, name.last].filter((part) => typeof part === 'string' && part);
  return parts.length > 0 ? parts.join(' ') : undefined;
}

/** `credentials.oidc.config.providers`, or its identifiers (`<provider>:<subject>`). */
function oidcLinks(oidc: unknown): NonNullable<SourceUser['line']['links']> {
  if (!isObject(oidc)) return [];
  const config = isObject(oidc.config) ? oidc.config : {};
  if (Array.isArray(config.providers)) {
    return config.providers.map((provider, index) => {
      if (!isObject(provider)) throw validationError(`oidc provider ${index} must be an object`);
      const name = text(provider, 'provider');
      const subject = text(provider, 'subject');
      if (!name || !subject)
        throw validationError(`oidc provider ${index} needs provider and subject`);
      return { provider: name, subject, verified: true };
    });
  }
  return expectArray(oidc.identifiers ?? [], 'credentials.oidc.identifiers').map((identifier) => {
    const at = typeof identifier === 'string' ? identifier.indexOf(':') : -1;
    if (at <= 0) throw validationError('an oidc identifier must be "<provider>:<subject>"');
    const value = identifier as string;
    return { provider: value.slice(0, at), subject: value.slice(at + 1), verified: true };
  });
}
