import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { Actor, AuditLog } from '../audit/audit-log.js';
import { notFound, validationError } from '../errors.js';
import { newClientSecret } from './client-secret.js';
import type { Store } from '../store.js';
import {
  type OidcClientRecord,
  type OidcClientView,
  type TokenEndpointAuthMethod,
  requireClientName,
  requireRedirectUris,
  toOidcClientView,
} from './client.js';

export interface OidcClientDeps {
  store: Store;
  clock: Clock;
  audit: AuditLog;
}

export interface NewOidcClient {
  name: string;
  redirectUris: string[];
  postLogoutRedirectUris?: string[];
  public?: boolean;
  firstParty?: boolean;
  /** For a confidential client: how it sends its secret; client_secret_basic by default. */
  tokenEndpointAuthMethod?: string;
}

export async function createOidcClient(
  deps: OidcClientDeps,
  actor: Actor,
  input: NewOidcClient,
): Promise<{ client: OidcClientView; client_secret: string | null }> {
  const name = requireClientName(input.name);
  const redirectUris = requireRedirectUris(input.redirectUris, 'redirect URI');
  const logoutUris = requireRedirectUris(
    input.postLogoutRedirectUris ?? [],
    'post-logout redirect URI',
    0,
  );
  const method = authMethodOf(input);
  const issued = input.public ? null : newClientSecret();
  const record: OidcClientRecord = {
    id: newId(),
    name,
    secret_hash: issued?.secretHash ?? null,
    token_endpoint_auth_method: method,
    redirect_uris: JSON.stringify(redirectUris),
    post_logout_redirect_uris: JSON.stringify(logoutUris),
    first_party: input.firstParty ? 1 : 0,
    created_at: deps.clock.now(),
    revoked_at: null,
  };
  const client = toOidcClientView(record);
  await deps.store.transaction(async (tx) => {
    await tx.insertOidcClient(record);
    await deps.audit.write(tx, actor, {
      action: 'oidc_client_create',
      details: {
        client_id: record.id,
        name,
        type: client.type,
        first_party: client.first_party,
        redirect_uris: redirectUris,
      },
    });
  });
  return { client, client_secret: issued?.secret ?? null };
}

function authMethodOf(input: NewOidcClient): TokenEndpointAuthMethod {
  const method = input.tokenEndpointAuthMethod;
  if (input.public) {
    if (method !== undefined && method !== 'none') {
      throw validationError(
        'a public client has no secret: its token endpoint auth method is none',
      );
    }
    return 'none';
  }
  if (method === undefined) return 'client_secret_basic';
  if (method !== 'client_secret_basic' && method !== 'client_secret_post') {
    throw validationError(
      'token endpoint auth method must be client_secret_basic or client_secret_post (or --public)',
    );
  }
  return method;
}

/** Revoking a client refuses it everywhere at once and deletes every token it holds. */
export async function revokeOidcClient(
  deps: OidcClientDeps,
  actor: Actor,
  clientId: string,
): Promise<OidcClientView & { tokens_removed: number }> {
  return deps.store.transaction(async (tx) => {
    const record = await tx.findOidcClient(clientId);
    if (!record) throw notFound();
    const now = deps.clock.now();
    await tx.revokeOidcClient(record.id, now);
    const removed = await tx.deleteOidcModelsByClient(record.id);
    await deps.audit.write(tx, actor, {
      action: 'oidc_client_revoke',
      details: { client_id: record.id, name: record.name, models_removed: removed },
    });
    return {
      ...toOidcClientView({ ...record, revoked_at: record.revoked_at ?? now }),
      tokens_removed: removed,
    };
  });
}

export async function listOidcClients(store: Store): Promise<OidcClientView[]> {
  return (await store.listOidcClients()).map(toOidcClientView);
}
