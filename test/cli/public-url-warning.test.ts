import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_MAILER_WARNING } from '../../src/courier.js';
import { publicUrlWarning } from '../../src/http/security-headers.js';
import { cliSandbox, type CliSandbox } from '../helpers/cli.js';
import { startServe } from '../helpers/serve.js';

/** Issue 11 item 10: operators are told when the own origin follows the Host header. */
describe('SERVICE_PUBLIC_URL warning', () => {
  let box: CliSandbox;
  beforeAll(() => {
    box = cliSandbox();
  });
  afterAll(() => box?.remove());

  it('tessera serve on a non-loopback listener without it logs a warning through pino', async () => {
    const server = await startServe({ ...box.env, SERVICE_HOST: '0.0.0.0' });
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    // Without SERVICE_SMTP_URL serve also warns that mail goes to the log (docs/mail.md).
    const warnings = server.lines.filter(
      (line) => line.level === 40 && line.msg !== LOG_MAILER_WARNING,
    );
    expect(warnings).toEqual([
      expect.objectContaining({
        host: '0.0.0.0',
        msg: expect.stringMatching(/^SERVICE_PUBLIC_URL is unset/),
      }),
    ]);
  });

  it.each([
    ['0.0.0.0', null, true],
    ['::', null, true],
    ['10.1.2.3', null, true],
    ['tessera.internal', null, true],
    ['0.0.0.0', 'https://id.example.org', false],
    ['127.0.0.1', null, false],
    ['127.8.9.10', null, false],
    ['::1', null, false],
    ['localhost', null, false],
  ])('listening on %s with SERVICE_PUBLIC_URL %s: warns %s', (host, publicUrl, warns) => {
    expect(publicUrlWarning({ host, publicUrl }) !== null).toBe(warns);
  });
});
