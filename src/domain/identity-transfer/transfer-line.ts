import { isUuid } from '../../lib/ids.js';
import { parseInstant } from '../audit/audit-query.js';
import { DomainError, validationError } from '../errors.js';
import {
  type IdentityState,
  requireAvatarUrl,
  requireDisplayName,
  requireUsername,
} from '../identities/identity.js';
import { requireEmail } from '../identities/email.js';
import { requireLinkKeyPart } from '../links/link.js';
import type { HashTransfer } from '../passwords/hash-transfer.js';
import { acceptTotp } from '../second-factor/totp.js';

/** One line of an import file, validated: what `identity import` writes for it. */
export interface ImportLine {
  /** 1-based line number in the file, for reports. */
  line: number;
  /** Kept when given (a move between Tessera deployments); otherwise a new one. */
  id: string | null;
  username: string;
  display_name: string;
  avatar_url: string | null;
  /** Canonical; null when the line has none. */
  email: string | null;
  email_verified: boolean;
  state: IdentityState;
  created_at: number | null;
  password: LinePassword;
  links: Array<{ provider: string; subject: string; verified: boolean }>;
  /** An authenticator carried over: its base32 secret, canonical; null when the line has none. */
  totp: { secret: string } | null;
}

export type LinePassword =
  | { kind: 'hash'; stored: string; scheme: string }
  | { kind: 'plaintext'; password: string }
  | { kind: 'none' };

/** Links one line may carry: far above any real account, low enough to bound a batch. */
export const MAX_LINKS_PER_LINE = 100;

const FIELDS = new Set([
  'id',
  'username',
  'display_name',
  'avatar_url',
  'email',
  'email_verified',
  'state',
  'created_at',
  'password_hash',
  'password_hash_peppered',
  'password',
  'links',
  'totp',
]);
const LINK_FIELDS = new Set(['provider', 'subject', 'verified']);
const TOTP_FIELDS = new Set(['secret', 'algorithm', 'digits', 'period']);
const STATES: readonly IdentityState[] = ['active', 'disabled'];

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An optional field: absent and null both mean "not given". */
function optional<T>(object: Json, field: string, type: string): T | undefined {
  const value = object[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== type) throw validationError(`${field} must be a ${type}`);
  return value as T;
}

function unknownField(object: Json, known: Set<string>, where: string): void {
  const extra = Object.keys(object).find((key) => !known.has(key));
  if (extra !== undefined) throw validationError(`unknown field ${where}${JSON.stringify(extra)}`);
}

function readPassword(object: Json, transfer: HashTransfer): LinePassword {
  const hash = optional<string>(object, 'password_hash', 'string');
  const peppered = optional<boolean>(object, 'password_hash_peppered', 'boolean') ?? false;
  const password = optional<string>(object, 'password', 'string');
  if (hash !== undefined && password !== undefined) {
    throw validationError('give password_hash or password, not both');
  }
  if (peppered && hash === undefined) {
    throw validationError('password_hash_peppered needs a password_hash');
  }
  // A plaintext password meets the policy: checked with the whole line (import-identities).
  if (password !== undefined) {
    return { kind: 'plaintext', password };
  }
  if (hash === undefined) return { kind: 'none' };
  const accepted = transfer.accept(hash, { peppered });
  if ('refused' in accepted) throw validationError(accepted.refused);
  return { kind: 'hash', stored: accepted.stored, scheme: accepted.scheme };
}

function readLinks(object: Json): ImportLine['links'] {
  const links = object.links ?? [];
  if (!Array.isArray(links)) throw validationError('links must be an array');
  if (links.length > MAX_LINKS_PER_LINE) {
    throw validationError(`links may hold at most ${MAX_LINKS_PER_LINE} entries`);
  }
  return links.map((link: unknown, index) => {
    const where = `links[${index}]`;
    if (!isObject(link)) throw validationError(`${where} must be an object`);
    unknownField(link, LINK_FIELDS, `${where}.`);
    const { provider, subject, verified = false } = link;
    if (typeof provider !== 'string' || typeof subject !== 'string') {
      throw validationError(`${where} needs provider and subject strings`);
    }
    if (typeof verified !== 'boolean') throw validationError(`${where}.verified must be a boolean`);
    return {
      provider: requireLinkKeyPart('provider', provider),
      subject: requireLinkKeyPart('subject', subject),
      verified,
    };
  });
}

function readTotp(object: Json): ImportLine['totp'] {
  const totp = object.totp;
  if (totp === undefined || totp === null) return null;
  if (!isObject(totp)) throw validationError('totp must be an object');
  unknownField(totp, TOTP_FIELDS, 'totp.');
  if (typeof totp.secret !== 'string') throw validationError('totp.secret must be a string');
  if (totp.algorithm != null && typeof totp.algorithm !== 'string') {
    throw validationError('totp.algorithm must be a string');
  }
  for (const field of ['digits', 'period']) {
    if (totp[field] != null && !Number.isSafeInteger(totp[field])) {
      throw validationError(`totp.${field} must be an integer`);
    }
  }
  const accepted = acceptTotp({
    secret: totp.secret,
    algorithm: totp.algorithm ?? undefined,
    digits: (totp.digits as number | null) ?? undefined,
    period: (totp.period as number | null) ?? undefined,
  });
  if ('refused' in accepted) throw validationError(`totp: ${accepted.refused}`);
  return accepted;
}

/** Parses and validates one non-blank line; throws validation_error saying what is wrong. */
export function parseImportLine(text: string, line: number, transfer: HashTransfer): ImportLine {
  let object: unknown;
  try {
    object = JSON.parse(text);
  } catch {
    throw validationError('not a JSON object (each line holds one)');
  }
  if (!isObject(object)) throw validationError('not a JSON object (each line holds one)');
  unknownField(object, FIELDS, '');
  const rawUsername = object.username;
  if (typeof rawUsername !== 'string') throw validationError('username is required');
  const username = requireUsername(rawUsername);
  const id = optional<string>(object, 'id', 'string') ?? null;
  if (id !== null && !isUuid(id)) throw validationError('id must be a UUID');
  const state = optional<string>(object, 'state', 'string') ?? 'active';
  if (!STATES.includes(state as IdentityState)) {
    throw validationError(`state must be one of: ${STATES.join(', ')}`);
  }
  const createdAt = optional<string>(object, 'created_at', 'string');
  const rawEmail = optional<string>(object, 'email', 'string');
  const email = rawEmail === undefined ? null : requireEmail(rawEmail);
  const emailVerified = optional<boolean>(object, 'email_verified', 'boolean') ?? false;
  if (emailVerified && email === null) throw validationError('email_verified needs an email');
  return {
    line,
    id: id?.toLowerCase() ?? null,
    username,
    display_name: requireDisplayName(
      optional<string>(object, 'display_name', 'string') ?? username,
    ),
    avatar_url: requireAvatarUrl(optional<string>(object, 'avatar_url', 'string') ?? null),
    email,
    email_verified: emailVerified,
    state: state as IdentityState,
    created_at: createdAt === undefined ? null : parseInstant('created_at', createdAt),
    password: readPassword(object, transfer),
    links: readLinks(object),
    totp: readTotp(object),
  };
}

/** The sentence a validation failure carries; anything else is no line's fault. */
export function lineProblem(error: unknown): string {
  if (error instanceof DomainError && error.code === 'validation_error') return error.message;
  throw error;
}
