import { httpWebhookTransport } from './adapters/webhook-http.js';
import { WebhookEmitter } from './domain/webhooks/webhook-emitter.js';
import type { FastifyInstance } from 'fastify';
import { createArgon2Hasher } from './adapters/argon2-hasher.js';
import { createOtplibTotp } from './adapters/otplib-totp.js';
import { generateSigningKey } from './adapters/oidc-signing-key.js';
import { simpleWebAuthn } from './adapters/webauthn.js';
import { ProviderSignInCounters } from './adapters/provider-sign-in-metrics.js';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { AuditLog } from './domain/audit/audit-log.js';
import { LastUseRecorder } from './domain/sessions/last-use.js';
import { OutboxCounters } from './domain/outbox/outbox-worker.js';
import type { PasswordHasher } from './domain/passwords/password-hasher.js';
import { LegacyTokens } from './domain/tokens/legacy-tokens.js';
import type { KeyGenerator } from './domain/oidc/signing-keys.js';
import type { AppDeps } from './http/deps.js';
import type { ServerOptions } from './http/server.js';
import { createPasswordPolicy } from './password-checks/password-checks.js';
import { type Clock, systemClock } from './lib/clock.js';
import { OUTAGE_MESSAGES, type ServiceLog } from './service-log.js';
import { resolveSecretBox } from './secrets/encryption-key.js';
import { resolvePepper } from './secrets/pepper.js';
import { openStorage } from './storage/open.js';
import type { StoreHandle } from './storage/store.js';

export interface AppOverrides {
  store?: StoreHandle;
  clock?: Clock;
  hasher?: PasswordHasher;
  /** Makes the OpenID provider's signing keys (an RSA key pair takes a CPU-bound moment). */
  generateSigningKey?: KeyGenerator;
  /** Database schema to work in (PostgreSQL tests isolate themselves this way). */
  schema?: string;
  /** Tests only: hooks installed on the server before its routes. */
  instrument?: ServerOptions['instrument'];
  /** Tests only: schema compilers shared by the many servers of one process. */
  compilersFactory?: ServerOptions['compilersFactory'];
  /**
   * `tessera serve`: SQLite's WAL checkpoints run on a worker thread (docs/sqlite.md).
   * CLI commands and in-process tests open the store briefly and keep SQLite's own.
   */
  checkpointInWorker?: boolean;
}

export interface Services {
  deps: AppDeps;
  /** Flushes buffered audit rows and closes the database. */
  close(): Promise<void>;
}

const CHECKPOINTER_FAILED = 'SQLite checkpoint worker failed';

/** Composition root shared by the server and the CLI: no logic, only wiring. */
export async function buildServices(
  config: Config,
  log: ServiceLog,
  overrides: AppOverrides = {},
): Promise<Services> {
  const store =
    overrides.store ??
    openStorage({
      databaseUrl: config.databaseUrl,
      timeoutMs: config.dbTimeoutMs,
      poolSize: config.dbPoolSize,
      sqliteSynchronous: config.sqliteSynchronous,
      schema: overrides.schema,
      onPoolError: (error) => log.error({ err: error }, OUTAGE_MESSAGES.connectionLost),
      sqliteCheckpointer: overrides.checkpointInWorker
        ? { onFailure: (error) => log.error({ err: error }, CHECKPOINTER_FAILED) }
        : undefined,
    });
  const clock = overrides.clock ?? systemClock;
  try {
    const hasher =
      overrides.hasher ??
      (await createArgon2Hasher({
        ...config.argon2,
        pepper: resolvePepper(config, (message) => log.warn(message)),
        previousPeppers: config.passwordPeppersPrevious,
        concurrency: config.hashConcurrency,
      }));
    const audit = new AuditLog(store, clock, config.auditFlushMs, (error, lost) =>
      log.error({ err: error, lost }, OUTAGE_MESSAGES.auditUnwritten),
    );
    const webhooks = {
      emitter: new WebhookEmitter(clock),
      transport: httpWebhookTransport(config.webhookAllowPrivate),
    };
    audit.follow(webhooks.emitter);
    const deps: AppDeps = {
      config,
      store,
      clock,
      hasher,
      passwordPolicy: createPasswordPolicy(config.passwordMinScore),
      audit,
      secretBox: resolveSecretBox(config, (message) => log.warn(message)),
      webauthn: simpleWebAuthn,
      relyingParty: { id: config.webauthnRpId, name: config.webauthnRpName },
      sessionTtlMs: config.sessionTtlMs,
      lastUse: new LastUseRecorder(store, config.auditFlushMs, (error) =>
        log.error({ err: error }, OUTAGE_MESSAGES.lastUseUnwritten),
      ),
      usernameRule: config.rateLimits.loginUsername,
      // Refreshed by the server once migrated and after each sweep (serve.ts).
      legacyTokens: new LegacyTokens(),
      totp: createOtplibTotp(),
      generateSigningKey: overrides.generateSigningKey ?? generateSigningKey,
      secondFactorRule: config.rateLimits.secondFactor,
      outboxCounters: new OutboxCounters(),
      notices: config.mailNotices,
      webhooks,
      // Loaded only when a provider is configured: OAuth and JOSE code costs every start.
      providers: config.providers.length
        ? (await import('./adapters/providers/index.js')).upstreamProviders(config.providers)
        : new Map(),
      providerSignIns: new ProviderSignInCounters(),
      signInEmailCode: config.signInEmailCode,
    };
    return {
      deps,
      async close() {
        await deps.lastUse.flush();
        await audit.flush();
        await store.close();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}

export interface App {
  app: FastifyInstance;
  deps: AppDeps;
  /** `settling`: work (the outbox worker's stop) the database must outlive. */
  close(settling?: Promise<unknown>): Promise<void>;
}

/** The server's parts; `logger` is the process's one logger (one at `config.logLevel` if absent). */
export async function buildApp(
  config: Config,
  overrides: AppOverrides = {},
  given?: Logger,
): Promise<App> {
  // Loaded here: the CLI shares buildServices and logs to stderr, without pino.
  const logger = given ?? (await import('./log.js')).createLogger({ level: config.logLevel });
  const services = await buildServices(config, logger, overrides);
  // Loaded here, not at the top: the CLI shares buildServices and must not load the HTTP
  // adapter (Fastify, the routes) for commands that never serve.
  const { buildServer } = await import('./http/server.js');
  const app = await buildServer(services.deps, logger, {
    instrument: overrides.instrument,
    compilersFactory: overrides.compilersFactory,
  });
  return {
    app,
    deps: services.deps,
    async close(settling) {
      // Rows buffered so far are written first: the drain may take up to its timeout.
      const flushed = services.deps.audit.flush();
      await app.shutdown(config.shutdownTimeoutMs);
      await flushed;
      await settling;
      // Flushes again (the drained requests' rows), then closes the database.
      await services.close();
    },
  };
}

/**
 * The CLI's log: its warnings and errors are for the person at the terminal, one readable
 * line each on stderr (not JSON, not a stack), beside the command's own output.
 */
export const consoleLog: ServiceLog = {
  warn: (message) => console.warn(`tessera: ${message}`),
  error: ({ err }, message) => console.error(`tessera: ${message}: ${oneLine(err)}`),
};

function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  return `${text.split('\n')[0]}${typeof code === 'string' ? ` (${code})` : ''}`;
}
