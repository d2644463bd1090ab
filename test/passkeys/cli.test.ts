import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/domain/audit/audit.js';
import type { PasskeyRecord } from '../../src/domain/passkeys/passkey.js';
import { openStorage } from '../../src/storage/open.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { cliJson, cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';
import { identityRow } from '../helpers/records.js';

function passkeyRow(identityId: string, name: string, at: number): PasskeyRecord {
  return {
    id: crypto.randomUUID(),
    identity_id: identityId,
    credential_id: Buffer.from(name).toString('base64url'),
    public_key: 'AQID',
    sign_count: 0,
    transports: '["internal"]',
    device_type: 'multi_device',
    backed_up: 1,
    name,
    created_at: at,
    last_used_at: null,
  };
}

// Each CLI run is a Node process of its own: generous time for a loaded machine.
describe('tessera identity passkeys / reset-passkeys', { timeout: 180_000 }, () => {
  let box: CliSandbox;
  let store: StoreHandle;
  const owner = identityRow({ username: 'pk-owner' });
  const other = identityRow({ username: 'pk-other' });

  beforeAll(async () => {
    box = cliSandbox();
    store = openStorage({ databaseUrl: box.databaseFile, timeoutMs: 5000, poolSize: 1 });
    await store.migrate();
    await store.insertIdentity(owner);
    await store.insertIdentity(other);
    const at = Date.parse('2026-03-01T00:00:00Z');
    await store.insertPasskey(passkeyRow(owner.id, 'Phone', at));
    await store.insertPasskey(passkeyRow(owner.id, 'Laptop', at + 1));
    await store.insertPasskey(passkeyRow(other.id, 'Key', at));
  });
  afterAll(async () => {
    await store?.close();
    box?.remove();
  });

  it('lists by username or id, oldest first, as lines or JSON', async () => {
    const listed = await cliJson<{ name: string; identity_id: string }[]>(
      ['identity', 'passkeys', 'pk-owner', '--json'],
      box.env,
    );
    expect(listed.map((passkey) => passkey.name)).toEqual(['Phone', 'Laptop']);
    expect(listed[0]).toMatchObject({ identity_id: owner.id, backed_up: true });
    const text = await runCli(['identity', 'passkeys', owner.id], box.env);
    expect(text.stdout).toMatch(/ Phone {2}added 2026-03-01T00:00:00\.000Z {2}last used never\n/);
    const unknown = await runCli(['identity', 'passkeys', 'nobody'], box.env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/not_found/);
  });

  it('reset-passkeys removes every passkey of that identity only, audited', async () => {
    const reset = await cliJson<{ removed: number }>(
      ['identity', 'reset-passkeys', 'pk-owner', '--json'],
      box.env,
    );
    expect(reset).toEqual({ identity_id: owner.id, username: 'pk-owner', removed: 2 });
    expect(await store.listPasskeys(owner.id)).toEqual([]);
    expect(await store.listPasskeys(other.id)).toHaveLength(1);
    const again = await runCli(['identity', 'reset-passkeys', 'pk-owner'], box.env);
    expect(again.stdout).toBe(`removed 0 passkey(s) of pk-owner (${owner.id})\n`);
    const audit = await cliJson<AuditEntry[]>(['audit', 'list', '--limit', '20'], box.env);
    const rows = audit.filter((entry) => entry.action === 'passkeys_reset');
    expect(rows).toHaveLength(2);
    expect(rows[1]).toMatchObject({ service_name: 'cli', target_identity: owner.id });
  });
});
