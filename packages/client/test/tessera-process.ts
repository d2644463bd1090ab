import { cliJson, cliSandbox, type CliSandbox } from '../../../test/helpers/cli.js';
import { runServe, type ServeProcess } from '../../../test/helpers/serve.js';
import { checkToken } from '@tessera/client';
import { GRANTS } from '../../../src/domain/service-tokens/service-token.js';

export interface TesseraProcess {
  url: string;
  serviceToken: string;
  /**
   * Whether this server mints tokens without a checksum (before the checksummed format):
   * then clients here must accept legacy tokens to use them.
   */
  legacyTokens: boolean;
  serve: ServeProcess;
  /** Runs a `tessera` CLI command on this server's database and returns its JSON answer. */
  cli<T = unknown>(args: string[], input?: string): Promise<T>;
  stop(): Promise<void>;
}

/** A real `tessera serve` on its own SQLite file, with one service token holding every grant. */
export async function startTessera(env: Record<string, string> = {}): Promise<TesseraProcess> {
  const box: CliSandbox = cliSandbox();
  const { token } = await cliJson<{ token: string }>(
    ['svc', 'create', '--name', 'client-tests', ...GRANTS.flatMap((g) => ['--grant', g])],
    box.env,
  );
  const serve = await runServe({
    ...box.env,
    SERVICE_SWEEP_INTERVAL_MINUTES: '0',
    ...env,
    SERVICE_PORT: '0',
    // The helper learns the address from the "tessera listening" line.
    SERVICE_LOG_LEVEL: 'info',
  }).listening;
  return {
    url: serve.url,
    serviceToken: token,
    legacyTokens: checkToken('service', token) !== 'ok',
    serve,
    cli: (args, input) => cliJson(args, box.env, input),
    async stop() {
      await serve.stop();
      box.remove();
    },
  };
}
