import type { Command } from 'commander';
import {
  createOidcClient,
  listOidcClients,
  revokeOidcClient,
} from '../domain/oidc/client-service.js';
import { SIGNING_KEY_RETENTION_MS } from '../domain/oidc/lifetimes.js';
import { listSigningKeys, rotateSigningKey } from '../domain/oidc/signing-keys.js';
import { cliActor, withServices } from './context.js';
import { printJson, printList } from './output.js';

const repeat = (value: string, all: string[]) => [...all, value];

interface CreateOptions {
  name: string;
  redirectUri: string[];
  postLogoutRedirectUri: string[];
  public?: boolean;
  firstParty?: boolean;
  tokenEndpointAuthMethod?: string;
  json?: boolean;
}

/** `tessera oidc ...`: the OpenID Connect provider's clients and signing keys (docs/oidc.md). */
export function oidcCommands(program: Command): void {
  const oidc = program.command('oidc').description('OpenID Connect provider: clients and keys');
  const client = oidc.command('client').description('applications that sign users in with Tessera');

  client
    .command('create')
    .description('register an application; a confidential client secret is printed once')
    .requiredOption('--name <name>', 'name shown to users on the consent page')
    .option('--redirect-uri <uri>', 'an exact redirect URI (repeatable; at least one)', repeat, [])
    .option(
      '--post-logout-redirect-uri <uri>',
      'where RP-initiated logout may return (repeatable)',
      repeat,
      [],
    )
    .option('--public', 'a public client (browser or native app): no secret, PKCE required')
    .option('--first-party', "the operator's own application: no consent page")
    .option(
      '--token-endpoint-auth-method <method>',
      'client_secret_basic (default) or client_secret_post',
    )
    .option('--json', 'print one JSON document')
    .action(async (options: CreateOptions) => {
      const created = await withServices((deps) =>
        createOidcClient(deps, cliActor(), {
          name: options.name,
          redirectUris: options.redirectUri,
          postLogoutRedirectUris: options.postLogoutRedirectUri,
          public: options.public,
          firstParty: options.firstParty,
          tokenEndpointAuthMethod: options.tokenEndpointAuthMethod,
        }),
      );
      const { client: view, client_secret: secret } = created;
      if (options.json) {
        return printJson({ ...view, ...(secret === null ? {} : { client_secret: secret }) });
      }
      console.log(`created ${view.type} client ${view.name}`);
      console.log(`client_id: ${view.client_id}`);
      if (secret !== null) console.log(`client_secret (shown once): ${secret}`);
      console.log(`redirect URIs: ${view.redirect_uris.join(', ')}`);
    });

  client
    .command('list')
    .description('list registered applications')
    .option('--json', 'print one JSON document')
    .action(async (options: { json?: boolean }) => {
      const clients = await withServices((deps) => listOidcClients(deps.store));
      printList(clients, options.json, 'no OIDC clients', (item) => {
        const state = item.revoked_at ? `revoked ${item.revoked_at}` : 'active';
        const party = item.first_party ? 'first-party' : 'third-party';
        // Still accepted; a new client gets a checksummed secret (docs/tokens.md).
        const legacy = item.secret_format === 'legacy' ? '  pre-checksum secret' : '';
        return `${item.client_id}  ${item.name}  ${item.type}  ${party}  ${state}  ${item.redirect_uris.join(' ')}${legacy}`;
      });
    });

  client
    .command('revoke <clientId>')
    .description('revoke an application and delete every token it holds')
    .option('--json', 'print one JSON document')
    .action(async (clientId: string, options: { json?: boolean }) => {
      const revoked = await withServices((deps) => revokeOidcClient(deps, cliActor(), clientId));
      if (options.json) return printJson(revoked);
      console.log(`revoked client ${revoked.name} (${revoked.client_id})`);
    });

  const keys = oidc.command('keys').description("the provider's signing keys");

  keys
    .command('list')
    .description('list signing keys and their state (next, active, retired, expired)')
    .option('--json', 'print one JSON document')
    .action(async (options: { json?: boolean }) => {
      const list = await withServices((deps) => listSigningKeys(deps, SIGNING_KEY_RETENTION_MS));
      printList(
        list,
        options.json,
        'no signing keys (created on the first start with OIDC on)',
        (key) => {
          const until = key.unpublished_at ? `  published until ${key.unpublished_at}` : '';
          return `${key.kid}  ${key.alg}  ${key.state}  activates ${key.activates_at}${until}`;
        },
      );
    });

  keys
    .command('rotate')
    .description('add a new signing key: published now, signing after the activation delay')
    .option('--json', 'print one JSON document')
    .action(async (options: { json?: boolean }) => {
      const key = await withServices((deps) =>
        rotateSigningKey(deps, cliActor(), deps.generateSigningKey, SIGNING_KEY_RETENTION_MS),
      );
      if (options.json) return printJson(key);
      console.log(`new signing key ${key.kid} (${key.alg}), signing from ${key.activates_at}`);
    });
}
