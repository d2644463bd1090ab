import { buildApp } from './app.js';
import type { Config } from './config.js';
import { sweep } from './domain/sweep.js';
import { publicUrlWarning } from './http/security-headers.js';

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
    const closing = close();
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
