import type { Command } from 'commander';
import { type PepperCount, pepperStatus } from '../domain/passwords/pepper-status.js';
import { withServices } from './context.js';
import { printJson } from './output.js';

const ROLE_NOTE: Record<PepperCount['role'], string> = {
  current: 'current: every new hash',
  previous: 'previous: still verifies',
  missing: 'MISSING: not configured, these hashes verify no password (link sign-in recovers)',
};

export function pepperCommands(program: Command): void {
  program
    .command('pepper')
    .description('the password peppers (docs/password-hashing.md)')
    .command('status')
    .description('how many stored password hashes depend on each pepper, by id')
    .option('--json', 'print one JSON document')
    .action(async (options: { json?: boolean }) => {
      const status = await withServices((deps) => pepperStatus(deps));
      if (options.json) return printJson(status);
      for (const pepper of status.peppers) {
        const untagged = pepper.untagged > 0 ? ` (${pepper.untagged} untagged)` : '';
        const droppable =
          pepper.role === 'previous' && pepper.hashes === 0 ? '; can be dropped' : '';
        console.log(
          `${pepper.id}  ${pepper.hashes} hash(es)${untagged}  ${ROLE_NOTE[pepper.role]}${droppable}`,
        );
      }
      console.log(
        `imported, no pepper: ${status.imported}; no password: ${status.without_password}`,
      );
    });
}
