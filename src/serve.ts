import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';
import type { AppDeps } from './http/deps.js';
import { type App, buildApp } from './app.js';
import { LOG_MAILER_WARNING, buildCourier } from './courier.js';
import { type Config, ConfigError, loadConfig, unknownVariableWarnings } from './config.js';
import { sweep } from './domain/sweep.js';
import { publicUrlWarning } from './http/security-headers.js';
import { createLogger, routeProcessOutput } from './log.js';

/**
 * `tessera serve`. Once it runs, every line the process writes is a JSON log line from one
 * logger. A failed start (a bad setting, a port in use, an unreachable database) is thrown
 * instead, and reported like any command's failure: one line on standard error, no stack
 * (cli/failure.ts, docs/operations.md "Start-up errors").
 */
export async function serve(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = loadConfig(env);
  const logger = createLogger({ level: config.logLevel });
  routeProcessOutput(logger);
  for (const warning of unknownVariableWarnings(env)) logger.warn(warning);
  await start(config, logger);
}

/** Migrate, listen, sweep periodically, stop gracefully on SIGTERM/SIGINT. */
async function start(config: Config, logger: Logger): Promise<void> {
  const built = await buildApp(config, { checkpointInWorker: true }, logger);
  try {
    await run(config, built);
  } catch (error) {
    // Closed before the failure is reported: the SQLite WAL is checkpointed and removed.
    await built.close().catch(() => undefined);
    throw error;
  }
}

async function run(config: Config, { app, deps, close }: App): Promise<void> {
  // Every instance sends the outbox; claims keep two from sending one row (docs/mail.md).
  // Built before migrating: a bad template directory stops the start before it writes.
  const courier = buildCourier(config.mail, {
    store: deps.store,
    clock: deps.clock,
    counters: deps.outboxCounters,
    log: app.log,
    webhooks: {
      store: deps.store,
      secretBox: deps.secretBox,
      transport: deps.webhooks.transport,
      clock: deps.clock,
    },
  });
  const applied = await deps.store.migrate();
  if (applied.length > 0) app.log.info({ applied }, 'migrations applied');
  await checkLegacyTokens(deps, app.log, true);
  // The hasher makes its dummy hash on first use (adapters/argon2-hasher.ts): made now, the
  // first sign-in of an unknown username costs what every later one does.
  await deps.hasher.verifyDummy('');
  if (app.oidc) {
    // Loading the signing keys now, not on the first OIDC request, re-seals at once those
    // sealed under a previous encryption key, and names one that no longer opens.
    await app.oidc
      .refresh()
      .catch((error: unknown) => app.log.error({ err: error }, 'OIDC signing keys did not load'));
  }

  let sweeping = false;
  const sweeper =
    config.sweepIntervalMs > 0
      ? setInterval(() => {
          if (sweeping) return;
          sweeping = true;
          sweep(deps.store, deps.clock, { oidc: config.oidcIssuer !== null })
            .then((removed) => app.log.info({ removed }, 'sweep done'))
            .then(() => checkLegacyTokens(deps, app.log))
            .catch((error: unknown) => app.log.warn({ err: error }, 'sweep failed'))
            .finally(() => (sweeping = false));
        }, config.sweepIntervalMs).unref()
      : undefined;

  const onSigterm = () => stop('SIGTERM');
  const onSigint = () => stop('SIGINT');
  const stop = (signal: string) => {
    // A second signal, of either kind, ends the process at once.
    process.off('SIGTERM', onSigterm).off('SIGINT', onSigint);
    clearInterval(sweeper);
    // The drain is bounded by SERVICE_SHUTDOWN_TIMEOUT_MS and each database call by
    // SERVICE_DB_TIMEOUT_MS; should anything still hang, the process ends anyway.
    const backstop = config.shutdownTimeoutMs + 2 * config.dbTimeoutMs + 1000;
    setTimeout(() => {
      app.log.error({ signal }, 'shutdown did not finish in time');
      process.exit(1);
    }, backstop).unref();
    // Starts the drain at once (docs/operations.md, "Shutdown"), then says so.
    // The worker stops claiming at once; the database closes once its sends are recorded
    // (or abandoned after the drain's timeout: those are sent again after their lease).
    const closing = close(courier.stop(config.shutdownTimeoutMs));
    app.log.info({ signal }, 'shutting down');
    closing
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.once('SIGTERM', onSigterm).once('SIGINT', onSigint);

  let address: string;
  try {
    address = await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    process.off('SIGTERM', onSigterm).off('SIGINT', onSigint);
    clearInterval(sweeper);
    throw listenFailure(error, config);
  }
  app.log.info({ address, database: deps.store.dialect }, 'tessera listening');
  const warning = publicUrlWarning(config);
  if (warning) app.log.warn({ host: config.host }, warning);
  // Sending starts once the start can no longer fail (a failed start closes the database).
  if (config.mail.smtpUrl === null) app.log.warn(LOG_MAILER_WARNING);
  courier.start();
}

/**
 * Looks whether pre-checksum tokens remain (docs/tokens.md), logging the answer at start-up
 * and when it changes. A failed look keeps the previous answer; the next sweep looks again.
 */
async function checkLegacyTokens(
  deps: AppDeps,
  log: FastifyBaseLogger,
  atStartUp = false,
): Promise<void> {
  const before = deps.legacyTokens.snapshot();
  try {
    await deps.legacyTokens.refresh(deps.store);
  } catch (error) {
    log.warn({ err: error }, 'pre-checksum token check failed');
    return;
  }
  const after = deps.legacyTokens.snapshot();
  if (atStartUp || JSON.stringify(before) !== JSON.stringify(after)) {
    log.info({ legacy_tokens_remain: after }, 'pre-checksum tokens checked');
  }
}

/** Why the listener could not open, as the setting to change (ConfigError: one line, no stack). */
function listenFailure(error: unknown, config: Config): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${config.host}:${config.port}`;
  switch (code) {
    case 'EADDRINUSE':
      return ConfigError.unusable(
        'SERVICE_PORT',
        String(config.port),
        `another process listens on ${where}; stop it or choose another port`,
      );
    case 'EACCES':
      return ConfigError.unusable(
        'SERVICE_PORT',
        String(config.port),
        `this user may not listen on ${where}; ports below 1024 need root or CAP_NET_BIND_SERVICE`,
      );
    case 'EADDRNOTAVAIL':
      return ConfigError.unusable(
        'SERVICE_HOST',
        config.host,
        'it is not an address of this machine (0.0.0.0 listens on all of them)',
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return ConfigError.unusable('SERVICE_HOST', config.host, 'the host name does not resolve');
    default:
      return error;
  }
}
