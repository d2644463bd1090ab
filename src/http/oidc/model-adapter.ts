import Provider, {
  errors,
  type Adapter,
  type AdapterConstructor,
  type AdapterPayload,
} from 'oidc-provider';
import type { IdentityRecord } from '../../domain/identities/identity.js';
import type { OidcClientRecord } from '../../domain/oidc/client.js';
import type { OidcModelRecord } from '../../domain/oidc/model.js';
import {
  isOidcTokenKind,
  type OidcSpend,
  type OidcTokenKind,
} from '../../domain/oidc/oidc-store.js';
import type { Store } from '../../domain/store.js';
import type { Clock } from '../../lib/clock.js';

/** The extra client property that marks the operator's own applications (no consent page). */
export const FIRST_PARTY = 'tessera_first_party';

/**
 * The models `revokeByGrantId` ends (as oidc-provider's reference adapters): the tokens and
 * codes of a grant. Others carry a `grantId` too (an interaction, for one), but revoking a
 * grant must not delete, say, the interaction of a sign-in still under way.
 */
const GRANTABLE = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
]);

/** The provider's answer to a second use of a single-use model, in its own words. */
function secondUse(kind: string): Error {
  switch (kind) {
    case 'AuthorizationCode':
      return new errors.InvalidGrant('authorization code already consumed');
    case 'RefreshToken':
      return new errors.InvalidGrant('refresh token already used');
    case 'PushedAuthorizationRequest':
      return new errors.InvalidRequestUri('request_uri is invalid, expired, or was already used');
    default:
      return new errors.InvalidGrant(`${kind} already used`);
  }
}

/** Models without an `expiresIn` (none today) are kept as long as a grant can live. */
const FALLBACK_TTL_SECONDS = 14 * 24 * 60 * 60;

/**
 * The client registry as the provider sees it. The stored value of `client_secret` is the
 * secret's SHA-256: the provider never compares it itself (Client#compareClientSecret is
 * replaced, provider.ts), and no HMAC algorithm that would key on it is enabled.
 */
export function clientMetadata(record: OidcClientRecord): AdapterPayload {
  return {
    client_id: record.id,
    client_name: record.name,
    ...(record.secret_hash === null ? {} : { client_secret: record.secret_hash }),
    token_endpoint_auth_method: record.token_endpoint_auth_method,
    redirect_uris: JSON.parse(record.redirect_uris) as string[],
    post_logout_redirect_uris: JSON.parse(record.post_logout_redirect_uris) as string[],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    [FIRST_PARTY]: record.first_party === 1,
  };
}

/**
 * What a request's read of a code or token brought along (its grant, session, client and
 * identity: the provider's next finds at the token endpoint, userinfo and introspection),
 * keyed by the request's Koa context, which oidc-provider keeps in its AsyncLocalStorage
 * (`Provider.ctx`). Each entry is taken once. Any write of the adapter drops the models
 * (a grant or session the request changed is read again); the client and the identity stay,
 * as the adapter never writes them (an authorization code is spent before the provider
 * asks for its identity). Outside a request there is no context and nothing is kept.
 */
interface Prefetched {
  models: Map<string, OidcModelRecord>;
  rows: Map<string, OidcClientRecord | IdentityRecord>;
}
const prefetched = new WeakMap<object, Prefetched>();
const requestContext = (): object | undefined =>
  (Provider as unknown as { ctx?: object }).ctx ?? undefined;

function take<R extends OidcModelRecord | OidcClientRecord | IdentityRecord>(
  key: string,
): R | undefined {
  const ctx = requestContext();
  const entries = ctx && prefetched.get(ctx);
  if (!entries) return undefined;
  const map: Map<string, unknown> = entries.models.has(key) ? entries.models : entries.rows;
  const entry = map.get(key) as R | undefined;
  map.delete(key);
  return entry;
}

/** The identity a code or token read of this request brought along (`findAccount`). */
export const prefetchedIdentity = (id: string) => take<IdentityRecord>(`Identity ${id}`);

function forgetPrefetchedModels(): void {
  const ctx = requestContext();
  if (ctx) prefetched.get(ctx)?.models.clear();
}

/**
 * A token request's writes are held until its answer is ready, then written in one commit
 * (`commitTokenWrites`, from host.ts before the answer goes out): the code or refresh token
 * it spends and the two tokens it issues were three commits. The provider checked
 * `consumed` before calling `consume`; the commit decides, as the consume did: of
 * concurrent requests spending one code or refresh token, on any instance, one writes its
 * tokens and the others end the grant. Any other call of the adapter during the request
 * writes what is held first, so it sees the provider's writes in the provider's order.
 */
interface HeldWrites {
  spend: OidcSpend | null;
  /** By kind and id: a model written twice is written once, as it was last. */
  upserts: Map<string, OidcModelRecord>;
  /** Writes them, through the store of the adapter that holds them. */
  commit(): Promise<void>;
}
const held = new WeakMap<object, HeldWrites>();

/**
 * Writes what the token request `ctx` holds, if anything; throws the provider's error when
 * it spent a code or refresh token somebody used first (the grant is then ended).
 */
export function commitTokenWrites(ctx: object): Promise<void> {
  return held.get(ctx)?.commit() ?? Promise.resolve();
}

/**
 * The models a token request issues, whose writes it holds. Any other (a replay-detection
 * row, say, whose uniqueness is checked as it is written) is written at once.
 */
const HELD_KINDS = new Set(['AccessToken', 'RefreshToken']);

/** The request whose writes are held: a token request (the provider's `token` route). */
function holdingContext(): object | undefined {
  const ctx = requestContext() as { oidc?: { route?: string } } | undefined;
  return ctx?.oidc?.route === 'token' ? ctx : undefined;
}

/**
 * oidc-provider's storage adapter (one instance per model name) on Tessera's store, so every
 * instance over one database sees the same codes, tokens, sessions and grants. Rows expire
 * by the injected clock; the provider also checks each payload's own `exp`.
 */
export function storeAdapter(store: Store, clock: Clock): AdapterConstructor {
  /**
   * A replay: its grant and every token of it end (the winner's too, had it won first), and
   * the provider's error for a second use is thrown.
   */
  async function endReplayedGrant(kind: string, id: string): Promise<never> {
    const grantId = GRANTABLE.has(kind)
      ? (await store.findOidcModel(kind, id, clock.now()))?.grant_id
      : null;
    // Gone already when another replay ended the grant first.
    if (grantId) {
      await store.deleteOidcModelsByGrant(grantId);
      await store.destroyOidcModel('Grant', grantId);
    }
    throw secondUse(kind);
  }

  /** What the token request `ctx` holds, held by this adapter from its first write on. */
  function heldWrites(ctx: object): HeldWrites {
    let writes = held.get(ctx);
    if (writes) return writes;
    const commit = async () => {
      held.delete(ctx);
      if (await store.writeOidcModels(writes!.spend, [...writes!.upserts.values()])) return;
      await endReplayedGrant(writes!.spend!.kind, writes!.spend!.id);
    };
    held.set(ctx, (writes = { spend: null, upserts: new Map(), commit }));
    return writes;
  }

  /** Before any other call of the adapter: what the request holds is written first. */
  const commitHeldFirst = () => {
    const ctx = requestContext();
    return ctx && commitTokenWrites(ctx);
  };

  return class StoreAdapter implements Adapter {
    constructor(private readonly kind: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      if (this.kind === 'Client') throw new Error('clients are registered with the CLI');
      forgetPrefetchedModels();
      const record: OidcModelRecord = {
        kind: this.kind,
        id,
        payload: JSON.stringify(payload),
        grant_id: GRANTABLE.has(this.kind) ? (payload.grantId ?? null) : null,
        client_id: payload.clientId ?? null,
        uid: payload.uid ?? null,
        user_code: payload.userCode ?? null,
        consumed_at: null,
        expires_at: clock.now() + (expiresIn ?? FALLBACK_TTL_SECONDS) * 1000,
      };
      const ctx = HELD_KINDS.has(this.kind) ? holdingContext() : undefined;
      if (ctx) {
        heldWrites(ctx).upserts.set(`${this.kind} ${id}`, record);
      } else {
        await commitHeldFirst();
        await store.upsertOidcModel(record);
      }
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      await commitHeldFirst();
      if (this.kind === 'Client') {
        const client = take<OidcClientRecord>(`Client ${id}`) ?? (await store.findOidcClient(id));
        return client && client.revoked_at === null ? clientMetadata(client) : undefined;
      }
      if (isOidcTokenKind(this.kind)) return this.#findToken(this.kind, id);
      return payloadOf(
        take<OidcModelRecord>(`${this.kind} ${id}`) ??
          (await store.findOidcModel(this.kind, id, clock.now())),
      );
    }

    /** One read for the code or token and what the provider finds next (see `prefetched`). */
    async #findToken(kind: OidcTokenKind, id: string): Promise<AdapterPayload | undefined> {
      const ctx = requestContext();
      if (!ctx) return payloadOf(await store.findOidcModel(kind, id, clock.now()));
      const read = await store.findOidcToken(kind, id, clock.now());
      if (!read) return undefined;
      const models = new Map<string, OidcModelRecord>();
      const rows = new Map<string, OidcClientRecord | IdentityRecord>();
      if (read.grant) models.set(`Grant ${read.grant.id}`, read.grant);
      if (read.session) models.set(`Session uid ${read.session.uid}`, read.session);
      if (read.client) rows.set(`Client ${read.client.id}`, read.client);
      if (read.account) rows.set(`Identity ${read.account.id}`, read.account);
      prefetched.set(ctx, { models, rows });
      return payloadOf(read.token);
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      await commitHeldFirst();
      return payloadOf(
        take<OidcModelRecord>(`${this.kind} uid ${uid}`) ??
          (await store.findOidcModelByUid(this.kind, uid, clock.now())),
      );
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      await commitHeldFirst();
      return payloadOf(await store.findOidcModelByUserCode(this.kind, userCode, clock.now()));
    }

    /**
     * The provider checks `consumed` when it finds a code or refresh token, and only then
     * calls `consume` and issues tokens: concurrent redemptions all pass that check. The
     * conditional update lets exactly one through, on any instance and database. Every other
     * caller is a replay, answered as the provider answers one it catches itself: its
     * OAuth error (`invalid_grant`), after ending the grant and every token of it.
     */
    async consume(id: string): Promise<void> {
      forgetPrefetchedModels();
      const ctx = holdingContext();
      if (ctx) {
        // Writes held before a spend stay before it: they do not depend on it.
        if (held.has(ctx)) await commitTokenWrites(ctx);
        heldWrites(ctx).spend = { kind: this.kind, id, at: clock.now() };
        return;
      }
      if (await store.consumeOidcModel(this.kind, id, clock.now())) return;
      await endReplayedGrant(this.kind, id);
    }

    async destroy(id: string): Promise<void> {
      await commitHeldFirst();
      forgetPrefetchedModels();
      await store.destroyOidcModel(this.kind, id);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await commitHeldFirst();
      forgetPrefetchedModels();
      await store.deleteOidcModelsByGrant(grantId);
    }
  };
}

function payloadOf(record: OidcModelRecord | undefined): AdapterPayload | undefined {
  if (!record) return undefined;
  const payload = JSON.parse(record.payload) as AdapterPayload;
  // The provider only asks whether (and since when, in seconds) a code or token was used.
  if (record.consumed_at !== null) payload.consumed = Math.floor(record.consumed_at / 1000);
  return payload;
}
