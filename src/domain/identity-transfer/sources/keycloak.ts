import { validationError } from '../../errors.js';
import {
  entry,
  expectArray,
  flag,
  isObject,
  requireArgs,
  type Source,
  type SourceUser,
  text,
  time,
} from './source.js';

/**
 * Keycloak: a realm export (`kc.sh export --realm <realm> --file realm.json`, users in the
 * same file), then, for `--users different_files`, each `<realm>-users-<n>.json`.
 */
export const keycloak: Source = {
  usage: 'the realm export, then any <realm>-users-<n>.json files',
  async read(args, inputs) {
    requireArgs(args, 1, Infinity, 'the realm export (realm.json), then any users files');
    const users: Array<{ file: string; index: number; user: unknown }> = [];
    for (const file of args) {
      const document = await inputs.json(file);
      if (!isObject(document) || typeof document.realm !== 'string') {
        throw validationError(`${file} is no Keycloak realm export (it has no "realm")`);
      }
      expectArray(document.users ?? [], `${file}: users`).forEach((user, index) =>
        users.push({ file, index, user }),
      );
    }
    const several = args.length > 1;
    return users.map(({ file, index, user }) => {
      const name = isObject(user) && typeof user.username === 'string' ? ` (${user.username})` : '';
      const where = `${several ? `${file}: ` : ''}users[${index}]${name}`;
      return entry(where, () => keycloakUser(user));
    });
  },
};

function keycloakUser(user: unknown): SourceUser | { skipped: string } {
  if (!isObject(user)) throw validationError('a user must be a JSON object');
  const client = text(user, 'serviceAccountClientId');
  if (client !== undefined) return { skipped: `the service account of client ${client}` };
  const credentials = expectArray(user.credentials ?? [], 'credentials').filter(isObject);
  const password = credentials.find((credential) => credential.type === 'password');
  const name = [text(user, 'firstName'), text(user, 'lastName')].filter(Boolean).join(' ');
  const email = text(user, 'email');
  return {
    username: text(user, 'username') ?? null,
    line: {
      id: text(user, 'id'),
      display_name: name || undefined,
      email,
      email_verified: email !== undefined && flag(user, 'emailVerified'),
      // `enabled` is always written; a user without it is enabled (Keycloak's default).
      state: user.enabled === false ? 'disabled' : 'active',
      created_at: time(user, 'createdTimestamp'),
      password_hash: password === undefined ? undefined : passwordHash(password),
      links: expectArray(user.federatedIdentities ?? [], 'federatedIdentities').map(
        (federated, index) => {
          const provider = isObject(federated) ? text(federated, 'identityProvider') : undefined;
          const subject = isObject(federated) ? text(federated, 'userId') : undefined;
          if (!provider || !subject) {
            throw validationError(
              `federatedIdentities[${index}] needs identityProvider and userId`,
            );
          }
          return { provider, subject, verified: true };
        },
      ),
    },
    factors: credentials.flatMap((credential) =>
      credential.type === 'otp' ? ['totp'] : credential.type === 'webauthn' ? ['webauthn'] : [],
    ),
  };
}

const PBKDF2_DIGESTS: Record<string, string> = {
  pbkdf2: 'sha1',
  'pbkdf2-sha256': 'sha256',
  'pbkdf2-sha512': 'sha512',
};

/** Base64 as PHC strings write it: standard alphabet, no padding. */
const unpadded = (base64: string) => base64.replace(/=+$/, '');

/**
 * A Keycloak password credential (`secretData` {value, salt}, `credentialData`
 * {hashIterations, algorithm, additionalParameters}, both JSON text) as a string the import
 * accepts: PBKDF2 in Ory Kratos's form (which says the key length: Keycloak's keys are 64
 * bytes whatever the digest), argon2 as a PHC string.
 */
function passwordHash(credential: Record<string, unknown>): string {
  const secret = jsonText(credential, 'secretData');
  const data = jsonText(credential, 'credentialData');
  const value = text(secret, 'value');
  const salt = text(secret, 'salt');
  const algorithm = text(data, 'algorithm');
  const iterations = data.hashIterations;
  if (!value || !salt || !algorithm || !Number.isSafeInteger(iterations)) {
    throw validationError(
      'password credential needs secretData.value and .salt, and credentialData.algorithm and .hashIterations',
    );
  }
  const digest = PBKDF2_DIGESTS[algorithm];
  if (digest !== undefined) {
    const length = Buffer.from(value, 'base64').length;
    return `$pbkdf2-${digest}$i=${String(iterations)},l=${length}$${unpadded(salt)}$${unpadded(value)}`;
  }
  if (algorithm === 'argon2') {
    const parameters = isObject(data.additionalParameters) ? data.additionalParameters : {};
    // Keycloak writes each additional parameter as a list of strings: {"memory": ["7168"]}.
    const parameter = (name: string, fallback: string) => {
      const list = parameters[name];
      return Array.isArray(list) && typeof list[0] === 'string' ? list[0] : fallback;
    };
    const version = parameter('version', '1.3') === '1.0' ? 16 : 19;
    const m = parameter('memory', '7168');
    const p = parameter('parallelism', '1');
    return `$argon2${parameter('type', 'id')}$v=${version}$m=${m},t=${String(iterations)},p=${p}$${unpadded(salt)}$${unpadded(value)}`;
  }
  throw validationError(
    `password algorithm ${JSON.stringify(algorithm)} is not one the import reads (pbkdf2, pbkdf2-sha256, pbkdf2-sha512, argon2)`,
  );
}

function jsonText(object: Record<string, unknown>, field: string): Record<string, unknown> {
  const raw = text(object, field);
  try {
    const parsed: unknown = raw === undefined ? undefined : JSON.parse(raw);
    if (isObject(parsed)) return parsed;
  } catch {
    // refused below
  }
  throw validationError(`password credential's ${field} must be JSON text of an object`);
}
