import type { Command } from 'commander';
import { listAuditEntries, parseAuditQuery } from '../domain/audit/audit-query.js';
import { resolveIdentity } from '../domain/identities/identity-service.js';
import { withServices } from './context.js';
import { parseCount } from './input.js';
import { printList } from './output.js';

interface AuditListOptions {
  limit?: string;
  action: string[];
  identity?: string;
  since?: string;
  until?: string;
  json?: boolean;
}

export function auditCommands(program: Command): void {
  program
    .command('audit')
    .description('the audit log')
    .command('list')
    .description('audit entries, newest first; every filter given must match')
    .option('--limit <n>', 'at most this many (1-10000, default 50)')
    .option(
      '--action <action>',
      'only this action (repeatable: any of them)',
      (value, all: string[]) => [...all, value],
      [],
    )
    .option('--identity <idOrUsername>', 'only entries about this identity')
    .option('--since <instant>', 'only entries at or after this ISO 8601 date or time')
    .option('--until <instant>', 'only entries before this ISO 8601 date or time')
    .option('--json', 'print one JSON document')
    .action(async (options: AuditListOptions) => {
      const query = parseAuditQuery({
        limit: parseCount(options.limit),
        actions: options.action,
        since: options.since,
        until: options.until,
      });
      const entries = await withServices(async (deps) => {
        if (options.identity !== undefined) {
          query.filter.target_identity = (await resolveIdentity(deps.store, options.identity)).id;
        }
        return listAuditEntries(deps.store, query);
      });
      printList(entries, options.json, 'no audit entries', (entry) => {
        const who = entry.service_name ?? '-';
        const target = entry.target_identity ?? '-';
        return `${entry.timestamp}  ${entry.action}  ${entry.outcome}  service=${who}  identity=${target}  ${JSON.stringify(entry.details)}`;
      });
    });
}
