/**
 * Starts the example beside a running Tessera:
 *   TESSERA_URL (default http://127.0.0.1:8080), PORT (3000), HOST (127.0.0.1),
 *   APP_URL (http://HOST:PORT), TESSERA_SERVICE_TOKEN (optional: verify instead of whoami),
 *   TESSERA_ACCEPT_LEGACY_TOKENS=true (tokens minted before the checksum).
 */
import { createExampleApp } from './app.js';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);
const appUrl = process.env.APP_URL ?? `http://${host}:${port}`;
const tesseraUrl = process.env.TESSERA_URL ?? 'http://127.0.0.1:8080';

const app = createExampleApp({
  tesseraUrl,
  appUrl,
  serviceToken: process.env.TESSERA_SERVICE_TOKEN || undefined,
  acceptLegacyTokens: process.env.TESSERA_ACCEPT_LEGACY_TOKENS === 'true',
});

const server = app.listen(port, host, () => {
  console.log(`example app on ${appUrl} (Tessera at ${tesseraUrl})`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
