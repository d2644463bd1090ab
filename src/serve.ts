import { buildApp } from './app.js';
import type { Config } from './config.js';
import { sweep } from './domain/sweep.js';

/** `tessera serve`: migrate, listen, sweep periodically, stop gracefully on SIGTERM/SIGINT. */
export async function serve(config: Config): Promise<void> {
  const { app, deps, close } = await buildApp(
    config,
    {},
    {
      warn: (message) => console.warn(`tessera: ${message}`),
      error: (object, message) => console.error(`tessera: ${message}`, object),
    },
  );
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
