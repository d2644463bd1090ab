import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PasskeyRecord } from '../../src/domain/passkeys/passkey.js';
import { UniqueViolation } from '../../src/domain/unique-violation.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { createMigratedStore, describeEachDatabase } from '../helpers/databases.js';
import { identityRow } from '../helpers/records.js';

const NOW = Date.parse('2026-11-21T10:00:00Z');

function passkey(identityId: string, credentialId: string): PasskeyRecord {
  return {
    id: crypto.randomUUID(),
    identity_id: identityId,
    credential_id: credentialId,
    public_key: 'AQID',
    sign_count: 0,
    transports: '[]',
    device_type: 'single_device',
    backed_up: 0,
    name: 'Key',
    created_at: NOW,
    last_used_at: null,
  };
}

describeEachDatabase('passkey store', (kind) => {
  let store: StoreHandle;
  beforeAll(async () => {
    store = await createMigratedStore(kind);
  });
  afterAll(() => store?.close());

  it('a credential id belongs to one passkey; use, rename and delete stay within the identity', async () => {
    const owner = identityRow();
    const other = identityRow();
    await store.insertIdentity(owner);
    await store.insertIdentity(other);
    const mine = passkey(owner.id, 'cred-1');
    await store.insertPasskey(mine);
    await expect(store.insertPasskey(passkey(other.id, 'cred-1'))).rejects.toBeInstanceOf(
      UniqueViolation,
    );
    await store.recordPasskeyUse(mine.id, {
      sign_count: 7,
      backed_up: 1,
      device_type: 'multi_device',
      last_used_at: NOW + 1,
    });
    expect(await store.findPasskeyByCredentialId('cred-1')).toEqual({
      ...mine,
      sign_count: 7,
      backed_up: 1,
      device_type: 'multi_device',
      last_used_at: NOW + 1,
    });
    expect(await store.renamePasskey(other.id, mine.id, 'Stolen')).toBeUndefined();
    expect((await store.renamePasskey(owner.id, mine.id, 'Phone'))?.name).toBe('Phone');
    expect(await store.deletePasskey(other.id, mine.id)).toBe(false);
    expect(await store.deletePasskey(owner.id, mine.id)).toBe(true);
    expect(await store.listPasskeys(owner.id)).toEqual([]);
  });

  it('a challenge: one per binding, taken once, not after expiry, gone with its flow', async () => {
    const flow = {
      id: `tess_f_${'a'.repeat(43)}`,
      kind: 'login' as const,
      csrf_token: 'x',
      return_to: null,
      state: 'created' as const,
      failed_attempts: 0,
      identity_id: null,
      first_method: null,
      issued_at: NOW,
      expires_at: NOW + 1000,
    };
    await store.insertFlow({ ...flow, token_format: 'crc32' });
    const binding = `flow:${flow.id}`;
    const record = {
      binding,
      flow_id: flow.id,
      session_id: null,
      challenge_hash: 'first',
      expires_at: flow.expires_at,
    };
    await store.putWebAuthnChallenge(record);
    await store.putWebAuthnChallenge({ ...record, challenge_hash: 'second' });
    const racing = await Promise.all([
      store.takeWebAuthnChallenge(binding, NOW),
      store.takeWebAuthnChallenge(binding, NOW),
    ]);
    expect(racing.filter(Boolean).map((taken) => taken!.challenge_hash)).toEqual(['second']);

    await store.putWebAuthnChallenge(record);
    expect(await store.takeWebAuthnChallenge(binding, flow.expires_at)).toBeUndefined();
    await store.putWebAuthnChallenge(record);
    expect(await store.deleteExpiredWebAuthnChallenges(flow.expires_at)).toBe(1);
    await store.putWebAuthnChallenge(record);
    expect(await store.deleteExpiredFlows(flow.expires_at)).toBe(1);
    expect(await store.takeWebAuthnChallenge(binding, NOW)).toBeUndefined();
  });
});
