import type { Database } from '../schema.js';

/**
 * Every table of the schema, in an order that inserts each row after the rows it refers
 * to (sessions, links, credentials, operators and mail codes after identities; flow errors and WebAuthn
 * challenges after flows and sessions). `schema_migrations` is not here: the target's own
 * migration writes it.
 */
export const COPY_ORDER = [
  'identities',
  'sessions',
  'service_tokens',
  'audit_log',
  'rate_limits',
  'flows',
  'flow_errors',
  'links',
  'totp_factors',
  'recovery_codes',
  'passkeys',
  'webauthn_challenges',
  'oidc_models',
  'oidc_clients',
  'oidc_signing_keys',
  'outbox',
  'operators',
  'mail_codes',
  'webhooks',
  'provider_authorizations',
  'recovery_flows',
] as const satisfies readonly (keyof Database)[];

export type CopiedTable = (typeof COPY_ORDER)[number];

/**
 * A table added to `Database` but not to COPY_ORDER fails to compile here, so a copy can
 * never silently leave one out. (At run time copyDatabase also compares COPY_ORDER with
 * the tables the source really has.)
 */
type Forgotten = Exclude<keyof Database, CopiedTable>;
const everyTableListed: [Forgotten] extends [never] ? true : Forgotten = true;
void everyTableListed;

/** The migrations' bookkeeping table: present on both sides, written by each migration. */
export const MIGRATIONS_TABLE = 'schema_migrations';
