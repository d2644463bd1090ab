import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStorage } from '../src/storage/open.js';
import { auditRecord } from '../src/domain/audit/audit-log.js';
const dir = mkdtempSync(join(tmpdir(), 'mb-'));
const store = openStorage({ databaseUrl: join(dir, 't.db'), timeoutMs: 5000, poolSize: 1 });
await store.migrate();
const actor = { service_name: 'bench', service_id: '0190a0a0-0000-7000-8000-000000000000' };
const ev = () => ({ action: 'session_verify', target_identity: '0190a0a0-0000-7000-8000-000000000001', outcome: 'ok', details: { session_id: '0190a0a0-0000-7000-8000-000000000002', method: 'POST', path: '/v1/sessions/verify' } });
function cpu() { const c = process.cpuUsage(); return c.user + c.system; }
for (let round = 0; round < 5; round++) {
  let c0 = cpu();
  const recs = [];
  for (let i = 0; i < 20000; i++) recs.push(auditRecord(actor, ev(), Date.now()));
  const build = (cpu() - c0) / 20000;
  c0 = cpu();
  for (let i = 0; i < recs.length; i += 100) await store.insertAuditRecords(recs.slice(i, i + 100));
  const ins = (cpu() - c0) / 20000;
  console.log('build µs', build.toFixed(2), 'insert µs/row', ins.toFixed(2));
}
await store.close();
