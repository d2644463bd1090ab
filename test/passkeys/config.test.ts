import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const base = { SERVICE_PASSWORD_PEPPER: 'p' };

describe('passkey configuration', () => {
  it('SERVICE_WEBAUTHN_RP_ID: the public host or a parent domain, lowercased; unset by default', () => {
    expect(loadConfig(base).webauthnRpId).toBeNull();
    expect(loadConfig(base).webauthnRpName).toBe('Tessera');
    expect(
      loadConfig({
        ...base,
        SERVICE_PUBLIC_URL: 'https://id.example.com',
        SERVICE_WEBAUTHN_RP_ID: 'Example.COM',
      }).webauthnRpId,
    ).toBe('example.com');
    expect(loadConfig({ ...base, SERVICE_WEBAUTHN_RP_ID: 'localhost' }).webauthnRpId).toBe(
      'localhost',
    );
  });

  it('refuses what cannot be a relying party id, naming the variable', () => {
    for (const [env, hint] of [
      [{ SERVICE_WEBAUTHN_RP_ID: 'https://example.com' }, /a domain name/],
      [{ SERVICE_WEBAUTHN_RP_ID: 'example.com:8443' }, /a domain name/],
      [{ SERVICE_WEBAUTHN_RP_ID: '.example.com' }, /a domain name/],
      [
        { SERVICE_WEBAUTHN_RP_ID: 'other.example', SERVICE_PUBLIC_URL: 'https://id.example.com' },
        /host of SERVICE_PUBLIC_URL \(id\.example\.com\) or a parent domain/,
      ],
      [
        { SERVICE_WEBAUTHN_RP_ID: 'ample.com', SERVICE_PUBLIC_URL: 'https://example.com' },
        /parent domain/,
      ],
      [{ SERVICE_WEBAUTHN_RP_NAME: 'x'.repeat(65) }, /1-64 characters/],
    ] as const) {
      const load = () => loadConfig({ ...base, ...env });
      expect(load).toThrow(ConfigError);
      expect(load).toThrow(/^SERVICE_WEBAUTHN_RP_(ID|NAME)=/);
      expect(load).toThrow(hint);
    }
  });
});
