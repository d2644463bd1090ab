import { afterEach, beforeEach, expect, it } from 'vitest';
import {
  grantOperator,
  isOperator,
  listOperators,
  revokeOperator,
} from '../../src/domain/admin/operators.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { addIdentity } from '../flows/helpers.js';
import { CLI_ACTOR, auditRows } from './helpers.js';

/** The operator role's domain service on each database (docs/admin.md, "Who may operate"). */
describeEachDatabase('operator role', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(kind);
  });
  afterEach(() => t.close());

  it('two grants at once: exactly one changes it, both audited', async () => {
    const alice = await addIdentity(t, 'alice');
    const results = await Promise.all([
      grantOperator(t.deps, CLI_ACTOR, 'alice'),
      grantOperator(t.deps, CLI_ACTOR, alice.id),
    ]);
    expect(results.map((result) => result.changed).sort()).toEqual([false, true]);
    expect(await isOperator(t.deps.store, alice.id)).toBe(true);
    const listed = await listOperators(t.deps.store);
    expect(listed).toEqual([{ identity: alice, granted_at: expect.any(String) }]);
    expect(await auditRows(t, 'operator_grant')).toHaveLength(2);
  });

  it('revokes once; a second revoke and an unknown identity change nothing', async () => {
    const alice = await addIdentity(t, 'alice');
    await grantOperator(t.deps, CLI_ACTOR, 'alice');
    expect((await revokeOperator(t.deps, CLI_ACTOR, 'alice')).changed).toBe(true);
    expect((await revokeOperator(t.deps, CLI_ACTOR, 'alice')).changed).toBe(false);
    await expect(revokeOperator(t.deps, CLI_ACTOR, 'nobody')).rejects.toMatchObject({
      code: 'not_found',
    });
    expect(await isOperator(t.deps.store, alice.id)).toBe(false);
    const rows = await auditRows(t, 'operator_revoke');
    expect(rows.map((row) => JSON.parse(row.details).changed)).toEqual([true, false]);
  });
});
