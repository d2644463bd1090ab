import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';
import type { AppDeps } from './http/deps.js';
import { buildApp } from './app.js';
import { LOG_MAILER_WARNING, buildCourier } from './courier.js';
import { type Config, loadConfig } from './config.js';
import { sweep } from './domain/sweep.js';
import { publicUrlWarning } from './http/security-headers.js';
import { createLogger, routeProcessOutput } from './log.js';

/**
 * `tessera serve`. Every line the process writes is a JSON log line from one logger, a
 * bad setting or a failed start included (then it exits 1).
 */
export async function serve(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  // The level is known once the configuration is read; until then a failure is fatal anyway.
  const logger = createLogger({ level: 'info' });
  routeProcessOutput(logger);
  try {
    const config = loadConfig(env);
    logger.level = config.logLevel;
    await start(config, logger);
  } catch (error) {
    logger.fatal({ err: error }, 'start-up failed');
    process.exit(1);
  }
}

/** Migrate, listen, sweep periodically, stop gracefully on SIGTERM/SIGINT. */
async function start(config: Config, logger: Logger): Promise<void> {
  const { app, deps, close } = await buildApp(config, { checkpointInWorker: true }, logger);
  // Every instance sends the outbox; claims keep two from sending one row (docs/mail.md).
  // Built before migrating: a bad template directory stops the start before it writes.
  const courier = buildCourier(config.mail, {
    store: deps.store,
    clock: deps.clock,
    counters: deps.outboxCounters,
    log: app.log,
  });
  const applied = await deps.store.migrate();
  if (applied.length > 0) app.log.info({ applied }, 'migrations applied');
  await checkLegacyTokens(deps, app.log, true);
  if (app.oidc) {
    // Loading the signing keys now, not on the first OIDC request, re-seals at once those
    // sealed under a previous encryption key, and names one that no longer opens.
    await app.oidc
      .refresh()
      .catch((error: unknown) => app.log.error({ err: error }, 'OIDC signing keys did not load'));
  }

  if (config.mail.smtpUrl === null) app.log.warn(LOG_MAILER_WARNING);
  courier.start();

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

  const address = await app.listen({ host: config.host, port: config.port });
  app.log.info({ address, database: deps.store.dialect }, 'tessera listening');
  const warning = publicUrlWarning(config);
  if (warning) app.log.warn({ host: config.host }, warning);
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
