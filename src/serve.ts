import type { Logger } from 'pino';
import { buildApp } from './app.js';
import { type Config, loadConfig } from './config.js';
import { sweep } from './domain/sweep.js';
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
  const { app, deps, close } = await buildApp(config, {}, logger);
  const applied = await deps.store.migrate();
  if (applied.length > 0) app.log.info({ applied }, 'migrations applied');

  let sweeping = false;
  const sweeper =
    config.sweepIntervalMs > 0
      ? setInterval(() => {
          if (sweeping) return;
          sweeping = true;
          sweep(deps.store, deps.clock)
            .then((removed) => app.log.info({ removed }, 'sweep done'))
            .catch((error: unknown) => app.log.warn({ err: error }, 'sweep failed'))
            .finally(() => (sweeping = false));
        }, config.sweepIntervalMs).unref()
      : undefined;

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    clearInterval(sweeper);
    // app.close() stops accepting and waits for in-flight requests; then the audit buffer
    // is flushed and the database closed.
    close()
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));

  const address = await app.listen({ host: config.host, port: config.port });
  app.log.info({ address, database: deps.store.dialect }, 'tessera listening');
}
