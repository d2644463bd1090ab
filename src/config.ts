import { readFileSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { isNoticeKind, NOTICE_KINDS, type NoticeSettings } from './domain/notices/notices.js';
import type { ProviderSettings } from './domain/providers/provider-settings.js';
import { closest } from './lib/edit-distance.js';
import { ProvidersFileError, parseProvidersFile } from './providers-file.js';
import { type RateLimitRule, parseRateLimitRule } from './lib/rate.js';
import {
  DATABASE_URL_FORMS,
  isPostgresUrl,
  sqliteFilename,
  unknownScheme,
} from './storage/database-url.js';

/** Every SERVICE_* setting, parsed and validated once at start-up. */
export interface Config {
  host: string;
  port: number;
  publicUrl: string | null;
  dataDir: string;
  databaseUrl: string;
  dbTimeoutMs: number;
  dbPoolSize: number;
  sqliteSynchronous: 'normal' | 'full';
  passwordPepper: string | null;
  /** SERVICE_PASSWORD_PEPPERS_PREVIOUS: retired peppers, newest first, that still verify. */
  passwordPeppersPrevious: string[];
  /** SERVICE_ENCRYPTION_KEY: seals secrets kept at rest (TOTP secrets, OIDC signing keys). */
  encryptionKey: string | null;
  /** SERVICE_ENCRYPTION_KEYS_PREVIOUS: retired keys that still open what they sealed. */
  encryptionKeysPrevious: string[];
  /** How recent a sign-in must be for a credential change (SERVICE_PRIVILEGED_WINDOW_MINUTES). */
  privilegedWindowMs: number;
  argon2: { memoryKib: number; iterations: number; parallelism: number };
  hashConcurrency: number;
  passwordMinScore: number;
  sessionTtlMs: number;
  sessionCorsOrigins: string[];
  cookieDomain: string | null;
  returnToAllowed: string[] | null;
  loginUiUrl: string | null;
  /** SERVICE_WEBAUTHN_RP_ID: the passkeys' relying party id; null: the service's host name. */
  webauthnRpId: string | null;
  /** SERVICE_WEBAUTHN_RP_NAME: the name authenticators show next to a passkey. */
  webauthnRpName: string;
  flowTtlMs: number;
  flowMaxAttempts: number;
  rateLimits: {
    loginIp: RateLimitRule;
    loginUsername: RateLimitRule;
    flowCreateIp: RateLimitRule;
    /** Challenge requests of a flow (`…/passkey/options`) per client address. */
    challengeIp: RateLimitRule;
    /** Second-factor codes per identity (SERVICE_RATE_LIMIT_SECOND_FACTOR). */
    secondFactor: RateLimitRule;
  };
  /** The issuer authenticator apps show beside a TOTP entry (SERVICE_TOTP_ISSUER). */
  totpIssuer: string;
  sweepIntervalMs: number;
  auditFlushMs: number;
  /** How long in-flight requests may take to finish after SIGTERM before connections are cut. */
  shutdownTimeoutMs: number;
  logLevel: string;
  /** One JSON line per request (SERVICE_ACCESS_LOG=on), written at level info. */
  accessLog: boolean;
  /** SERVICE_OIDC_ISSUER: the OpenID Connect provider's issuer URL; null turns OIDC off (docs/oidc.md). */
  oidcIssuer: string | null;
  /** Mail (docs/mail.md); `smtpUrl` null: mail is written to the log instead of sent. */
  mail: MailConfig;
  /** SERVICE_MAIL_NOTICES: the security notices that are sent (docs/mail.md). */
  mailNotices: NoticeSettings;
  /**
   * SERVICE_WEBHOOK_ALLOW_PRIVATE=on: webhook URLs may name loopback and private addresses
   * (local receivers, tests); off, they are refused (server-side request forgery).
   */
  webhookAllowPrivate: boolean;
  /** Self-service sign-up (docs/registration.md). */
  registration: RegistrationConfig;
  /** SERVICE_SIGN_IN_EMAIL_CODE=on: the sign-in method `email_code` is offered (docs/sign-in-methods.md). */
  signInEmailCode: boolean;
  /** SERVICE_PROVIDERS_FILE: the upstream providers' JSON file (docs/providers.md); null: none. */
  providersFile: string | null;
  /** The providers that file declares, validated, their secrets read from the environment. */
  providers: readonly ProviderSettings[];
}

export interface RegistrationConfig {
  /** SERVICE_REGISTRATION: `open` serves GET /v1/registration; `closed` (default) only the service API registers. */
  open: boolean;
  /**
   * SERVICE_REGISTRATION_EMAIL: `optional`, `required` (sign-up asks for an address and
   * mails a code), or `verified` (required, and an identity whose address is unverified
   * cannot sign in on a flow until it verifies).
   */
  email: 'optional' | 'required' | 'verified';
}

export interface MailConfig {
  /** SERVICE_SMTP_URL, credentials included: never log it. */
  smtpUrl: string | null;
  /** SERVICE_MAIL_FROM: the From of every mail. */
  from: string;
  /** SERVICE_MAIL_TEMPLATES_DIR: templates that replace the built-in ones. */
  templatesDir: string | null;
}

export class ConfigError extends Error {
  constructor(variable: string, accepts: string, value: string) {
    super(`${variable}=${JSON.stringify(value)} is invalid: expected ${accepts}`);
    this.name = 'ConfigError';
  }

  /** A well-formed value the machine refuses (a port in use): what happened, what to do. */
  static unusable(variable: string, value: string, reason: string): ConfigError {
    const error = new ConfigError(variable, '', value);
    error.message = `${variable}=${JSON.stringify(value)} cannot be used: ${reason}`;
    return error;
  }
}

type Env = Record<string, string | undefined>;

/** One row per variable: the README table is written from these names and defaults. */
export const DEFAULTS = {
  SERVICE_HOST: '127.0.0.1',
  SERVICE_PORT: '8080',
  SERVICE_DATA_DIR: './data',
  SERVICE_DB_TIMEOUT_MS: '5000',
  SERVICE_DB_POOL_SIZE: '10',
  SERVICE_SQLITE_SYNCHRONOUS: 'full',
  SERVICE_ARGON2_MEMORY_KIB: '19456',
  SERVICE_ARGON2_ITERATIONS: '2',
  SERVICE_ARGON2_PARALLELISM: '1',
  // argon2 (parallelism 1) keeps one core busy per hash: more hashes at once than cores only
  // add 19 MiB each and context switches. Four at most; `tessera` sizes libuv's threadpool
  // two threads beyond it, for file I/O (cli/threadpool.ts).
  SERVICE_HASH_CONCURRENCY: String(Math.min(4, availableParallelism())),
  // zxcvbn 2 refuses decorated common passwords ("password2024") yet a random 8 characters
  // pass; 3 would refuse those. docs/password-policy.md has the figures.
  SERVICE_PASSWORD_MIN_SCORE: '2',
  SERVICE_SESSION_TTL_HOURS: '72',
  SERVICE_PRIVILEGED_WINDOW_MINUTES: '15',
  SERVICE_WEBAUTHN_RP_NAME: 'Tessera',
  SERVICE_FLOW_TTL_MINUTES: '15',
  SERVICE_FLOW_MAX_ATTEMPTS: '5',
  SERVICE_RATE_LIMIT_LOGIN_IP: '30/60s',
  SERVICE_RATE_LIMIT_LOGIN_USERNAME: '10/15m',
  SERVICE_RATE_LIMIT_FLOW_CREATE_IP: '60/60s',
  SERVICE_RATE_LIMIT_CHALLENGE_IP: '60/60s',
  SERVICE_RATE_LIMIT_SECOND_FACTOR: '10/15m',
  SERVICE_TOTP_ISSUER: 'Tessera',
  SERVICE_SWEEP_INTERVAL_MINUTES: '15',
  SERVICE_AUDIT_FLUSH_MS: '1000',
  SERVICE_SHUTDOWN_TIMEOUT_MS: '5000',
  SERVICE_LOG_LEVEL: 'info',
  SERVICE_ACCESS_LOG: 'off',
  SERVICE_MAIL_NOTICES: 'all',
  SERVICE_WEBHOOK_ALLOW_PRIVATE: 'off',
  SERVICE_REGISTRATION: 'closed',
  SERVICE_REGISTRATION_EMAIL: 'required',
  SERVICE_SIGN_IN_EMAIL_CODE: 'off',
} as const;

/** The variables without a default: unset means off, none, or derived from another. */
const OPTIONAL = [
  'SERVICE_PUBLIC_URL',
  'SERVICE_DATABASE_URL',
  'SERVICE_PASSWORD_PEPPER',
  'SERVICE_PASSWORD_PEPPERS_PREVIOUS',
  'SERVICE_ENCRYPTION_KEY',
  'SERVICE_ENCRYPTION_KEYS_PREVIOUS',
  'SERVICE_SESSION_CORS_ORIGINS',
  'SERVICE_COOKIE_DOMAIN',
  'SERVICE_RETURN_TO_ALLOWED',
  'SERVICE_LOGIN_UI_URL',
  'SERVICE_WEBAUTHN_RP_ID',
  'SERVICE_OIDC_ISSUER',
  'SERVICE_SMTP_URL',
  'SERVICE_MAIL_FROM',
  'SERVICE_MAIL_TEMPLATES_DIR',
  'SERVICE_PROVIDERS_FILE',
] as const;

type OptionalName = (typeof OPTIONAL)[number];

/** Every variable the service reads: each is read through `read` or `optional`, typed by these. */
export const VARIABLES: readonly string[] = [...Object.keys(DEFAULTS), ...OPTIONAL];

/** Prefixes of Tessera's own test suite and benchmarks (test/, bench/), never warned about. */
const RESERVED_PREFIXES = ['SERVICE_TEST_', 'SERVICE_BENCH_'];

/**
 * One warning per SERVICE_* variable the service does not read (a typo such as
 * SERVICE_PROT would otherwise be ignored without a word), naming the closest known one.
 */
export function unknownVariableWarnings(env: Env): string[] {
  const prefix = 'SERVICE_';
  const known = VARIABLES.map((name) => name.slice(prefix.length));
  return Object.keys(env)
    .filter((name) => name.startsWith(prefix) && !VARIABLES.includes(name))
    .filter((name) => !RESERVED_PREFIXES.some((reserved) => name.startsWith(reserved)))
    .sort()
    .map((name) => {
      const near = closest(name.slice(prefix.length), known);
      const hint =
        near === null ? 'the README lists every setting' : `did you mean ${prefix}${near}?`;
      return `${name} is not a Tessera setting and is ignored: ${hint}`;
    });
}

function read(env: Env, name: keyof typeof DEFAULTS): string {
  const value = env[name];
  return value === undefined || value === '' ? DEFAULTS[name] : value;
}

function optional(env: Env, name: OptionalName): string | null {
  const value = env[name];
  return value === undefined || value.trim() === '' ? null : value.trim();
}

function number(
  env: Env,
  name: keyof typeof DEFAULTS,
  { min, max = Infinity, integer }: { min: number; max?: number; integer: boolean },
): number {
  const text = read(env, name);
  const value = Number(text);
  const ok = text.trim() !== '' && Number.isFinite(value) && value >= min && value <= max;
  if (!ok || (integer && !Number.isInteger(value))) {
    const range = max === Infinity ? `>= ${min}` : `from ${min} to ${max}`;
    throw new ConfigError(name, `${integer ? 'an integer' : 'a number'} ${range}`, text);
  }
  return value;
}

function oneOf<T extends string>(env: Env, name: keyof typeof DEFAULTS, values: readonly T[]): T {
  const text = read(env, name);
  if (!(values as readonly string[]).includes(text)) {
    throw new ConfigError(name, `one of ${values.join(', ')}`, text);
  }
  return text as T;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function logLevel(env: Env): string {
  const text = read(env, 'SERVICE_LOG_LEVEL');
  if (!LOG_LEVELS.includes(text)) {
    throw new ConfigError('SERVICE_LOG_LEVEL', `one of ${LOG_LEVELS.join(', ')}`, text);
  }
  return text;
}

function onOff(
  env: Env,
  name: 'SERVICE_WEBHOOK_ALLOW_PRIVATE' | 'SERVICE_SIGN_IN_EMAIL_CODE',
): boolean {
  const text = read(env, name);
  if (text !== 'on' && text !== 'off') throw new ConfigError(name, 'on or off', text);
  return text === 'on';
}

function accessLog(env: Env, level: string): boolean {
  const text = read(env, 'SERVICE_ACCESS_LOG');
  if (text !== 'on' && text !== 'off')
    throw new ConfigError('SERVICE_ACCESS_LOG', 'on or off', text);
  // Access lines are info lines: a level above info would silently drop what was asked for.
  if (text === 'on' && !['info', 'debug', 'trace'].includes(level)) {
    throw new ConfigError(
      'SERVICE_ACCESS_LOG',
      'off unless SERVICE_LOG_LEVEL is info, debug or trace',
      text,
    );
  }
  return text === 'on';
}

function rule(env: Env, name: keyof typeof DEFAULTS): RateLimitRule {
  const text = read(env, name);
  const parsed = parseRateLimitRule(text);
  if (!parsed) throw new ConfigError(name, '<count>/<window> such as 10/15m (units s, m, h)', text);
  return parsed;
}

function origin(name: string, text: string): string {
  try {
    const url = new URL(text);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
    return url.origin;
  } catch {
    throw new ConfigError(name, 'absolute http(s) URLs', text);
  }
}

function originList(env: Env, name: OptionalName): string[] {
  const text = optional(env, name);
  if (text === null) return [];
  return text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .map((item) => origin(name, item));
}

function url(env: Env, name: OptionalName): string | null {
  const text = optional(env, name);
  if (text === null) return null;
  origin(name, text);
  return text;
}

/** Allowed `return_to` prefixes: an origin, or an origin plus a path prefix. */
function returnToList(env: Env): string[] | null {
  const text = optional(env, 'SERVICE_RETURN_TO_ALLOWED');
  if (text === null) return null;
  return text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .map((item) => {
      origin('SERVICE_RETURN_TO_ALLOWED', item);
      return item;
    });
}

/** A comma-separated list of secrets; unset or empty is none. */
function secretList(env: Env, variable: OptionalName): string[] {
  const text = optional(env, variable);
  if (text === null) return [];
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** Shown in authenticator apps and put in otpauth:// URIs: printable, no colon (the label separator). */
function totpIssuer(env: Env): string {
  const text = read(env, 'SERVICE_TOTP_ISSUER').trim();
  const printable = [...text].every((char) => char >= ' ' && char !== '\u007f');
  if (text === '' || text.length > 64 || text.includes(':') || !printable) {
    throw new ConfigError('SERVICE_TOTP_ISSUER', '1-64 printable characters without ":"', text);
  }
  return text;
}

const DOMAIN =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * The relying party id: a domain name, which the service's own host must be or end in
 * (WebAuthn refuses any other). Passkeys are bound to it for good: changing it later makes
 * every registered passkey unusable (docs/passkeys.md).
 */
function rpId(env: Env, publicUrl: string | null): string | null {
  const text = optional(env, 'SERVICE_WEBAUTHN_RP_ID');
  if (text === null) return null;
  const id = text.toLowerCase();
  if (!DOMAIN.test(id)) {
    throw new ConfigError('SERVICE_WEBAUTHN_RP_ID', 'a domain name such as example.com', text);
  }
  const host = publicUrl === null ? null : new URL(publicUrl).hostname;
  if (host !== null && host !== id && !host.endsWith(`.${id}`)) {
    throw new ConfigError(
      'SERVICE_WEBAUTHN_RP_ID',
      `the host of SERVICE_PUBLIC_URL (${host}) or a parent domain of it`,
      text,
    );
  }
  return id;
}

function rpName(env: Env): string {
  const text = read(env, 'SERVICE_WEBAUTHN_RP_NAME').trim();
  // eslint-disable-next-line no-control-regex
  if (text === '' || text.length > 64 || /[\u0000-\u001f\u007f]/.test(text)) {
    throw new ConfigError('SERVICE_WEBAUTHN_RP_NAME', 'a name of 1-64 characters', text);
  }
  return text;
}

/**
 * The issuer: an absolute http(s) URL without query, fragment or trailing slash (ID tokens
 * carry it verbatim and relying parties compare it byte for byte). On the service's own
 * origin when SERVICE_PUBLIC_URL is set: the login interaction is Tessera's hosted page.
 */
function issuer(env: Env, publicUrl: string | null): string | null {
  const name = 'SERVICE_OIDC_ISSUER';
  const text = optional(env, name);
  if (text === null) return null;
  const accepts = 'an absolute http(s) URL without query, fragment or trailing slash';
  origin(name, text);
  const parsed = new URL(text);
  if (
    parsed.search ||
    parsed.hash ||
    text.includes('#') ||
    text.includes('?') ||
    text.endsWith('/')
  ) {
    throw new ConfigError(name, accepts, text);
  }
  if (parsed.username || parsed.password || /^\/v1(\/|$)/.test(parsed.pathname)) {
    throw new ConfigError(name, `${accepts}, outside /v1`, text);
  }
  if (publicUrl !== null && new URL(publicUrl).origin !== parsed.origin) {
    throw new ConfigError(
      name,
      `a URL on SERVICE_PUBLIC_URL's origin (${new URL(publicUrl).origin})`,
      text,
    );
  }
  return text;
}

/**
 * PostgreSQL or SQLite, never a guess: an unknown scheme (`mysql://`, `postgress://`) is
 * refused rather than taken for a file name, and so is a directory (docs/operations.md).
 * Only the scheme is repeated: the rest of a URL may hold a password.
 */
function readDatabaseUrl(env: Env, dataDir: string): string {
  const name = 'SERVICE_DATABASE_URL';
  const text = optional(env, name);
  const scheme = text === null ? null : unknownScheme(text);
  if (scheme !== null) throw new ConfigError(name, DATABASE_URL_FORMS, `${scheme}:…`);
  const url = text ?? `${dataDir}/tessera.db`;
  if (isPostgresUrl(url)) return url;
  const file = sqliteFilename(url);
  if (text !== null && file === '') throw new ConfigError(name, DATABASE_URL_FORMS, text);
  if (file !== ':memory:' && statSync(file, { throwIfNoEntry: false })?.isDirectory()) {
    const variable = text === null ? 'SERVICE_DATA_DIR' : name;
    throw ConfigError.unusable(
      variable,
      text ?? dataDir,
      `${file} is a directory, not a SQLite file`,
    );
  }
  return url;
}

/** Shown in errors instead of the URL: its password must not reach a log. */
function withoutPassword(text: string): string {
  return text.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}

function mail(env: Env): MailConfig {
  const smtpUrl = optional(env, 'SERVICE_SMTP_URL');
  if (smtpUrl !== null) {
    let protocol = '';
    try {
      protocol = new URL(smtpUrl).protocol;
    } catch {
      // reported below
    }
    if (protocol !== 'smtp:' && protocol !== 'smtps:') {
      const accepts = 'smtp://user:password@host:port or smtps://...';
      throw new ConfigError('SERVICE_SMTP_URL', accepts, withoutPassword(smtpUrl));
    }
  }
  const from = optional(env, 'SERVICE_MAIL_FROM');
  // `name@domain` or `Display Name <name@domain>`, on one line.
  if (from !== null && !/^(?:[^<>\r\n]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/.test(from)) {
    throw new ConfigError('SERVICE_MAIL_FROM', 'name@example.com or Name <name@example.com>', from);
  }
  if (from === null && smtpUrl !== null) {
    throw new ConfigError('SERVICE_MAIL_FROM', 'an address when SERVICE_SMTP_URL is set', '');
  }
  return {
    smtpUrl,
    from: from ?? 'Tessera <tessera@localhost>',
    templatesDir: optional(env, 'SERVICE_MAIL_TEMPLATES_DIR'),
  };
}

/** `all`, `none`, or a comma list of NOTICE_KINDS. */
function mailNotices(env: Env): NoticeSettings {
  const text = read(env, 'SERVICE_MAIL_NOTICES').trim();
  if (text === 'all') return new Set(NOTICE_KINDS);
  if (text === 'none') return new Set();
  const names = text.split(',').map((name) => name.trim());
  if (!names.every(isNoticeKind)) {
    throw new ConfigError(
      'SERVICE_MAIL_NOTICES',
      `all, none, or a comma list of ${NOTICE_KINDS.join(', ')}`,
      text,
    );
  }
  return new Set(names);
}

/** SERVICE_PROVIDERS_FILE read and checked at start-up: a bad entry stops it, named. */
function providers(env: Env): ProviderSettings[] {
  const file = optional(env, 'SERVICE_PROVIDERS_FILE');
  if (file === null) return [];
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw ConfigError.unusable('SERVICE_PROVIDERS_FILE', file, `the file cannot be read (${code})`);
  }
  try {
    return parseProvidersFile(text, env);
  } catch (error) {
    if (error instanceof ProvidersFileError) {
      throw ConfigError.unusable('SERVICE_PROVIDERS_FILE', file, error.message);
    }
    throw error;
  }
}

export function loadConfig(env: Env = process.env): Config {
  const dataDir = read(env, 'SERVICE_DATA_DIR');
  const databaseUrl = readDatabaseUrl(env, dataDir);
  const publicUrl = url(env, 'SERVICE_PUBLIC_URL');
  const argon2 = {
    memoryKib: number(env, 'SERVICE_ARGON2_MEMORY_KIB', { min: 19456, integer: true }),
    iterations: number(env, 'SERVICE_ARGON2_ITERATIONS', { min: 2, integer: true }),
    parallelism: number(env, 'SERVICE_ARGON2_PARALLELISM', { min: 1, integer: true }),
  };
  const ttlHours = number(env, 'SERVICE_SESSION_TTL_HOURS', { min: 0, integer: false });
  if (ttlHours <= 0) {
    throw new ConfigError('SERVICE_SESSION_TTL_HOURS', 'a number of hours > 0', String(ttlHours));
  }
  const level = logLevel(env);
  return {
    host: read(env, 'SERVICE_HOST'),
    port: number(env, 'SERVICE_PORT', { min: 0, max: 65535, integer: true }),
    publicUrl: publicUrl === null ? null : new URL(publicUrl).origin,
    dataDir,
    databaseUrl,
    dbTimeoutMs: number(env, 'SERVICE_DB_TIMEOUT_MS', { min: 1, integer: true }),
    dbPoolSize: number(env, 'SERVICE_DB_POOL_SIZE', { min: 1, integer: true }),
    sqliteSynchronous: oneOf(env, 'SERVICE_SQLITE_SYNCHRONOUS', ['normal', 'full'] as const),
    passwordPepper: optional(env, 'SERVICE_PASSWORD_PEPPER'),
    passwordPeppersPrevious: secretList(env, 'SERVICE_PASSWORD_PEPPERS_PREVIOUS'),
    encryptionKey: optional(env, 'SERVICE_ENCRYPTION_KEY'),
    encryptionKeysPrevious: secretList(env, 'SERVICE_ENCRYPTION_KEYS_PREVIOUS'),
    privilegedWindowMs:
      number(env, 'SERVICE_PRIVILEGED_WINDOW_MINUTES', { min: 1, integer: false }) * 60_000,
    argon2,
    hashConcurrency: number(env, 'SERVICE_HASH_CONCURRENCY', { min: 1, integer: true }),
    passwordMinScore: number(env, 'SERVICE_PASSWORD_MIN_SCORE', { min: 0, max: 4, integer: true }),
    sessionTtlMs: Math.round(ttlHours * 3_600_000),
    sessionCorsOrigins: originList(env, 'SERVICE_SESSION_CORS_ORIGINS'),
    cookieDomain: optional(env, 'SERVICE_COOKIE_DOMAIN'),
    returnToAllowed: returnToList(env),
    loginUiUrl: url(env, 'SERVICE_LOGIN_UI_URL'),
    webauthnRpId: rpId(env, publicUrl),
    webauthnRpName: rpName(env),
    flowTtlMs: number(env, 'SERVICE_FLOW_TTL_MINUTES', { min: 1, integer: false }) * 60_000,
    flowMaxAttempts: number(env, 'SERVICE_FLOW_MAX_ATTEMPTS', { min: 1, integer: true }),
    rateLimits: {
      loginIp: rule(env, 'SERVICE_RATE_LIMIT_LOGIN_IP'),
      loginUsername: rule(env, 'SERVICE_RATE_LIMIT_LOGIN_USERNAME'),
      flowCreateIp: rule(env, 'SERVICE_RATE_LIMIT_FLOW_CREATE_IP'),
      challengeIp: rule(env, 'SERVICE_RATE_LIMIT_CHALLENGE_IP'),
      secondFactor: rule(env, 'SERVICE_RATE_LIMIT_SECOND_FACTOR'),
    },
    totpIssuer: totpIssuer(env),
    sweepIntervalMs:
      number(env, 'SERVICE_SWEEP_INTERVAL_MINUTES', { min: 0, integer: false }) * 60_000,
    auditFlushMs: number(env, 'SERVICE_AUDIT_FLUSH_MS', { min: 1, integer: true }),
    shutdownTimeoutMs: number(env, 'SERVICE_SHUTDOWN_TIMEOUT_MS', { min: 0, integer: true }),
    logLevel: level,
    accessLog: accessLog(env, level),
    oidcIssuer: issuer(env, publicUrl),
    mail: mail(env),
    mailNotices: mailNotices(env),
    webhookAllowPrivate: onOff(env, 'SERVICE_WEBHOOK_ALLOW_PRIVATE'),
    registration: {
      open: oneOf(env, 'SERVICE_REGISTRATION', ['open', 'closed'] as const) === 'open',
      email: oneOf(env, 'SERVICE_REGISTRATION_EMAIL', [
        'optional',
        'required',
        'verified',
      ] as const),
    },
    signInEmailCode: onOff(env, 'SERVICE_SIGN_IN_EMAIL_CODE'),
    providersFile: optional(env, 'SERVICE_PROVIDERS_FILE'),
    providers: providers(env),
  };
}
