import { generateKeyPairSync } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { appleClientSecret } from '../../src/adapters/providers/apple-secret.js';

describe("Sign in with Apple's client secret", () => {
  it('is an ES256 JWT from the team, for the Services ID, to Apple, signed by the key', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const now = Date.now();
    const secret = await appleClientSecret(
      { teamId: 'TEAM123456', keyId: 'KEY1234567', privateKey: pem },
      'com.example.web',
      now,
    );
    expect(decodeProtectedHeader(secret)).toEqual({ alg: 'ES256', kid: 'KEY1234567' });
    const { payload } = await jwtVerify(secret, publicKey, {
      issuer: 'TEAM123456',
      subject: 'com.example.web',
      audience: 'https://appleid.apple.com',
    });
    expect(payload.exp! - payload.iat!).toBe(300);
  });
});
