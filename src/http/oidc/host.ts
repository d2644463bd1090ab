import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import { SIGNING_KEY_RETENTION_MS } from '../../domain/oidc/lifetimes.js';
import {
  KEY_REFRESH_MS,
  ensureSigningKey,
  publishedSigningKeys,
} from '../../domain/oidc/signing-keys.js';
import { revokeSessionByToken } from '../../domain/sessions/session-service.js';
import { isWellFormedToken } from '../../lib/tokens.js';
import { SESSION_COOKIE } from '../cookies.js';
import type { AppDeps } from '../deps.js';
import { commitTokenWrites } from './model-adapter.js';
import { createProvider } from './provider.js';

/** Audited as the end user's or the relying party's doing, never a service token's. */
const OIDC_ACTOR = { service_name: 'oidc', service_id: null };

/** Protocol endpoints whose every call is audited (discovery and JWKS are public reads). */
const AUDITED_ROUTES = new Set([
  'token',
  'revocation',
  'introspection',
  'userinfo',
  'end_session_confirm',
  'resume',
]);

interface Loaded {
  provider: Provider;
  /** Koa composes the middleware on every `callback()` call: once per build, not per request. */
  handler: ReturnType<Provider['callback']>;
  /** The published kids, in order: a change rebuilds the provider. */
  kids: string;
  checkedAt: number;
}

/**
 * The OpenID Connect provider inside Tessera's server (docs/oidc.md). Built on first use,
 * so the server starts (and migrates) before any key exists; rebuilt when the published
 * signing keys change, which every instance notices within KEY_REFRESH_MS. Everything the
 * provider keeps lives in the database, so dropping one instance's provider loses nothing.
 */
export class OidcHost {
  readonly issuer: URL;
  /** The issuer's path, without a trailing slash: '' for an issuer at the origin's root. */
  readonly prefix: string;
  #loaded: Promise<Loaded> | null = null;

  constructor(
    private readonly deps: AppDeps,
    private readonly issuerText: string,
  ) {
    this.issuer = new URL(issuerText);
    this.prefix = this.issuer.pathname.replace(/\/$/, '');
  }

  /** The provider, current within KEY_REFRESH_MS of the keys table. */
  async provider(): Promise<Provider> {
    return (await this.#current()).provider;
  }

  async #current(): Promise<Loaded> {
    const now = this.deps.clock.now();
    let loaded = this.#loaded;
    if (loaded === null) {
      loaded = this.#build(null);
      this.#loaded = loaded;
    } else {
      const current = await loaded.catch(() => null);
      if (current === null || now - current.checkedAt >= KEY_REFRESH_MS) {
        loaded = this.#build(current);
        this.#loaded = loaded;
      }
    }
    try {
      return await loaded;
    } catch (error) {
      // A failed start (the database away) is retried by the next request.
      if (this.#loaded === loaded) this.#loaded = null;
      throw error;
    }
  }

  /** Re-reads the keys now (tests and `oidc keys rotate` on a running instance). */
  async refresh(): Promise<void> {
    this.#loaded = this.#build(this.#loaded ? await this.#loaded.catch(() => null) : null);
    await this.#loaded;
  }

  async #build(previous: Loaded | null): Promise<Loaded> {
    const now = this.deps.clock.now();
    if (previous === null) {
      await ensureSigningKey(
        this.deps,
        { ...OIDC_ACTOR, details: { via: 'first start' } },
        this.deps.generateSigningKey,
      );
    }
    const keys = await publishedSigningKeys(this.deps, SIGNING_KEY_RETENTION_MS);
    const kids = keys.map((key) => `${key.kid}:${key.state}`).join(' ');
    if (previous !== null && previous.kids === kids) return { ...previous, checkedAt: now };
    const provider = createProvider(
      this.deps,
      this.issuerText,
      keys.map((key) => key.privateJwk),
    );
    // The issuer's scheme and host, whatever the request said: the provider builds every URL
    // (discovery, redirects, cookies' Secure flag) from them, and Tessera trusts no proxy
    // header. Set here, on a request the provider sees only after `handle` rewrote it.
    provider.proxy = true;
    provider.use(async (ctx, next) => this.#around(ctx as KoaContextWithOIDC, next));
    return { provider, handler: provider.callback(), kids, checkedAt: now };
  }

  /** Runs the provider on a raw request whose path starts with the issuer's. */
  async handle(
    req: IncomingMessage & { originalUrl?: string },
    res: ServerResponse,
  ): Promise<void> {
    const { handler } = await this.#current();
    req.headers.host = this.issuer.host;
    req.headers['x-forwarded-proto'] = this.issuer.protocol.slice(0, -1);
    delete req.headers['x-forwarded-host'];
    delete req.headers['x-forwarded-for'];
    const url = req.url ?? '/';
    req.originalUrl = url;
    req.url = url.slice(this.prefix.length) || '/';
    if (!req.url.startsWith('/')) req.url = `/${req.url}`;
    await handler(req, res);
  }

  /** Audits protocol calls and ends the Tessera session with an RP-initiated logout. */
  async #around(ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> {
    await next();
    await this.#commitTokenWrites(ctx);
    const route = ctx.oidc?.route;
    if (route === undefined || !AUDITED_ROUTES.has(route)) return;
    if (route === 'end_session_confirm' && ctx.oidc.params?.logout && ctx.status < 400) {
      // The provider also ends its own session when the browser's Tessera session now belongs
      // to someone else, and then returns to the authorization (`<issuer>/auth/<uid>`): that
      // new Tessera session is the one signing in, not one to end.
      const switching = (ctx.response.get('location') ?? '').startsWith(
        `${ctx.oidc.urlFor('authorization')}/`,
      );
      if (!switching) await this.#endTesseraSession(ctx);
    }
    const body = ctx.body as { error?: unknown } | undefined;
    const outcome =
      ctx.status < 400 ? 'ok' : typeof body?.error === 'string' ? body.error : `http_${ctx.status}`;
    const entities = ctx.oidc.entities as Record<string, { accountId?: string } | undefined>;
    const account =
      entities.Account?.accountId ??
      entities.AccessToken?.accountId ??
      entities.RefreshToken?.accountId ??
      entities.AuthorizationCode?.accountId ??
      ctx.oidc.session?.accountId ??
      null;
    const grantType = route === 'token' ? ctx.oidc.params?.grant_type : undefined;
    this.deps.audit.enqueue(OIDC_ACTOR, {
      action: `oidc_${route}`,
      outcome,
      target_identity: typeof account === 'string' ? account : null,
      details: {
        client_id: ctx.oidc.client?.clientId ?? null,
        ...(typeof grantType === 'string' ? { grant_type: grantType } : {}),
      },
    });
  }

  /**
   * A token request's writes, held by the adapter until now (model-adapter.ts): a request
   * that lost the race for its code or refresh token answers the provider's error instead
   * of the tokens it built, and a failed write its `server_error`, as the provider's own
   * error handler would have.
   */
  async #commitTokenWrites(ctx: KoaContextWithOIDC): Promise<void> {
    try {
      await commitTokenWrites(ctx);
    } catch (error) {
      if (error instanceof errors.OIDCProviderError && error.expose) {
        ctx.status = error.statusCode;
        ctx.body = { error: error.message, error_description: error.error_description };
      } else {
        ctx.status = 500;
        ctx.body = { error: 'server_error', error_description: 'oops! something went wrong' };
        ctx.oidc.provider.emit('server_error', ctx, error);
      }
    }
  }

  async #endTesseraSession(ctx: KoaContextWithOIDC): Promise<void> {
    const token = ctx.cookies.get(SESSION_COOKIE);
    if (isWellFormedToken('session', token)) {
      await revokeSessionByToken(
        this.deps,
        { ...OIDC_ACTOR, details: { via: 'oidc_logout', client_id: ctx.oidc.client?.clientId } },
        token,
      );
    }
    // Written by hand: Koa refuses a Secure cookie on a request it sees as plain http, and
    // this one must match the attributes the cookie was set with (cookies.ts).
    const domain = this.deps.config.cookieDomain ? `; Domain=${this.deps.config.cookieDomain}` : '';
    ctx.append(
      'set-cookie',
      `${SESSION_COOKIE}=; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/; HttpOnly; Secure; SameSite=Lax${domain}`,
    );
  }
}
