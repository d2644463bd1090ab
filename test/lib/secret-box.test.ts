import { describe, expect, it } from 'vitest';
import { createSecretBox } from '../../src/lib/secret-box.js';
import { isRecentSignIn, requireRecentSignIn } from '../../src/domain/sessions/recent-sign-in.js';

describe('secret box', () => {
  const box = createSecretBox('current key, long and random');

  it('opens what it sealed, only in the same context', () => {
    const sealed = box.seal('JBSWY3DPEHPK3PXP', 'totp:identity-1');
    expect(sealed).toMatch(/^sb1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain('JBSWY3DPEHPK3PXP');
    expect(box.open(sealed, 'totp:identity-1')).toBe('JBSWY3DPEHPK3PXP');
    expect(box.open(sealed, 'totp:identity-2')).toBeNull();
    expect(box.seal('same', 'c')).not.toBe(box.seal('same', 'c'));
  });

  it('refuses tampered or malformed values without throwing', () => {
    const sealed = box.seal('secret', 'c');
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3]!, 'base64url');
    body[0] = body[0]! ^ 1;
    parts[3] = body.toString('base64url');
    expect(box.open(parts.join('.'), 'c')).toBeNull();
    for (const bad of ['', 'sb1', 'sb1.a.b.c', 'sb2.x.y.z', `${sealed}.extra`]) {
      expect(box.open(bad, 'c')).toBeNull();
    }
  });

  it('rotates: a previous key opens its values, which are stale until re-sealed', () => {
    const old = createSecretBox('old key');
    const sealed = old.seal('secret', 'c');
    const rotated = createSecretBox('new key', ['old key']);
    expect(rotated.open(sealed, 'c')).toBe('secret');
    expect(rotated.isStale(sealed)).toBe(true);
    expect(rotated.isStale(rotated.seal('secret', 'c'))).toBe(false);
    expect(createSecretBox('new key').open(sealed, 'c')).toBeNull();
  });

  it('MACs per context and verifies in constant time', () => {
    const mac = box.mac('account-csrf', 'session-1');
    expect(box.verifyMac('account-csrf', 'session-1', mac)).toBe(true);
    expect(box.verifyMac('account-csrf', 'session-2', mac)).toBe(false);
    expect(box.verifyMac('other', 'session-1', mac)).toBe(false);
    expect(createSecretBox('another key').verifyMac('account-csrf', 'session-1', mac)).toBe(false);
  });
});

describe('recent sign-in window', () => {
  it('admits a sign-in inside the window and refuses one outside with forbidden', () => {
    expect(isRecentSignIn(1_000, 1_000 + 900_000, 900_000)).toBe(true);
    expect(() => requireRecentSignIn(1_000, 1_000 + 900_000, 900_000)).not.toThrow();
    expect(() => requireRecentSignIn(1_000, 1_001 + 900_000, 900_000)).toThrow(
      expect.objectContaining({
        code: 'forbidden',
        message: expect.stringContaining('15 minutes'),
      }),
    );
  });
});
