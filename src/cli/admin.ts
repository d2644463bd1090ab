import type { Command } from 'commander';
import { grantOperator, listOperators, revokeOperator } from '../domain/admin/operators.js';
import { cliActor, withServices } from './context.js';
import { printJson, printList } from './output.js';

/** `tessera admin grant|revoke|list`: who may use the admin console (docs/admin.md). */
export function adminCommands(program: Command): void {
  const admin = program.command('admin').description('operators of the admin console');

  admin
    .command('grant <idOrUsername>')
    .description('give an identity the operator role (the admin console); audited')
    .option('--json', 'print one JSON document')
    .action(async (idOrUsername: string, options: { json?: boolean }) => {
      const result = await withServices((deps) => grantOperator(deps, cliActor(), idOrUsername));
      if (options.json) return printJson(result);
      const { username, id } = result.identity;
      console.log(
        result.changed
          ? `${username} (${id}) is now an operator`
          : `${username} (${id}) already was an operator`,
      );
    });

  admin
    .command('revoke <idOrUsername>')
    .description('take the operator role away; audited')
    .option('--json', 'print one JSON document')
    .action(async (idOrUsername: string, options: { json?: boolean }) => {
      const result = await withServices((deps) => revokeOperator(deps, cliActor(), idOrUsername));
      if (options.json) return printJson(result);
      const { username, id } = result.identity;
      console.log(
        result.changed
          ? `${username} (${id}) is no longer an operator`
          : `${username} (${id}) was not an operator`,
      );
    });

  admin
    .command('list')
    .description('list operators, oldest grant first')
    .option('--json', 'print one JSON document')
    .action(async (options: { json?: boolean }) => {
      const operators = await withServices((deps) => listOperators(deps.store));
      printList(
        operators,
        options.json,
        'no operators',
        (operator) =>
          `${operator.identity.id}  ${operator.identity.username}  ${operator.identity.state}  granted ${operator.granted_at}`,
      );
    });
}
