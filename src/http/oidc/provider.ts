import Provider, {
  type Configuration,
  type KoaContextWithOIDC,
  interactionPolicy,
} from 'oidc-provider';
import { DomainError } from '../../domain/errors.js';
import { clientSecretMatches } from '../../domain/oidc/client-secret.js';
import { ACR_VALUES } from '../../domain/oidc/assurance.js';
import { OIDC_TTL_SECONDS } from '../../domain/oidc/lifetimes.js';
import { verifySession } from '../../domain/sessions/session-service.js';
import type { Session } from '../../domain/sessions/session.js';
import { SESSION_COOKIE } from '../cookies.js';
import type { AppDeps } from '../deps.js';
import { FIRST_PARTY, prefetchedIdentity, storeAdapter } from './model-adapter.js';
import { logoutPage, pageHeaders, problemPage, signedOutPage } from './pages.js';

/** The browser's Tessera session, or null when it has none that is valid now. */
export async function browserSession(deps: AppDeps, token: unknown): Promise<Session | null> {
  try {
    return await verifySession(deps, token);
  } catch (error) {
    if (error instanceof DomainError) return null;
    throw error;
  }
}

const { Check, base } = interactionPolicy;

/**
 * The default prompts, and one more reason to ask for login: the provider's own session
 * outlives nothing of Tessera's. When the browser's Tessera session is gone (signed out,
 * revoked, expired) or is now someone else's, the next authorization request goes through
 * the login interaction again, which takes whatever Tessera session the browser then has.
 */
function policy(deps: AppDeps): ReturnType<typeof base> {
  const prompts = base();
  prompts.get('login')!.checks.push(
    new Check(
      'tessera_session',
      'the Tessera session of this browser ended or changed',
      async (ctx: KoaContextWithOIDC) => {
        const accountId = ctx.oidc.session?.accountId;
        if (!accountId) return Check.NO_NEED_TO_PROMPT;
        const session = await browserSession(deps, ctx.cookies.get(SESSION_COOKIE));
        return session?.identity.id === accountId ? Check.NO_NEED_TO_PROMPT : Check.REQUEST_PROMPT;
      },
    ),
  );
  return prompts;
}

function originsOf(uris: readonly string[] | undefined): string[] {
  return (uris ?? []).map((uri) => new URL(uri).origin);
}

function sendHtml(
  ctx: KoaContextWithOIDC,
  status: number,
  html: string,
  formTargets: string[] = [],
): void {
  ctx.status = status;
  ctx.set(pageHeaders(formTargets));
  ctx.body = html;
}

/**
 * The sign-out question (pages.ts), posting to the provider's confirm endpoint with the
 * secret the provider just put in its session's state for this request.
 */
function askToSignOut(ctx: KoaContextWithOIDC): void {
  const client = ctx.oidc.client;
  const { secret } = ctx.oidc.session!.state as { secret: string };
  sendHtml(
    ctx,
    200,
    logoutPage(ctx.oidc.urlFor('end_session_confirm'), secret, client?.clientName),
    originsOf(client?.postLogoutRedirectUris),
  );
}

/**
 * Builds the provider for `issuer` with `keys` (private JWKs, the signing key first). Only
 * the server builds one; everything it stores goes through Tessera's store.
 */
export function createProvider(
  deps: AppDeps,
  issuer: string,
  keys: Record<string, unknown>[],
): Provider {
  const interactionBase = `${new URL(issuer).pathname.replace(/\/$/, '')}/interaction`;
  const configuration: Configuration = {
    adapter: storeAdapter(deps.store, deps.clock),
    jwks: { keys: keys as never },
    // Signed cookies: every instance derives the same key from SERVICE_ENCRYPTION_KEY.
    cookies: {
      keys: [deps.secretBox.mac('oidc-provider-cookies', issuer)],
      names: {
        session: 'tessera_oidc_session',
        interaction: 'tessera_oidc_interaction',
        resume: 'tessera_oidc_resume',
      },
    },
    async findAccount(_ctx, sub) {
      const identity = prefetchedIdentity(sub) ?? (await deps.store.findIdentityById(sub));
      if (!identity || identity.state !== 'active') return undefined;
      return {
        accountId: identity.id,
        async claims() {
          return {
            sub: identity.id,
            preferred_username: identity.username,
            name: identity.display_name,
            ...(identity.avatar_url ? { picture: identity.avatar_url } : {}),
            updated_at: Math.floor(identity.updated_at / 1000),
            // The `email` scope's claims (OpenID Connect Core 5.4): none without an address.
            ...(identity.email === null
              ? {}
              : { email: identity.email, email_verified: identity.email_verified_at !== null }),
          };
        },
      };
    },
    claims: {
      openid: ['sub', 'acr', 'amr', 'auth_time'],
      profile: ['preferred_username', 'name', 'picture', 'updated_at'],
      email: ['email', 'email_verified'],
    },
    scopes: ['openid', 'profile', 'email', 'offline_access'],
    // The profile and email claims go in the ID token too: most applications read only the ID token.
    conformIdTokenClaims: false,
    acrValues: [...ACR_VALUES],
    responseTypes: ['code'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      id_token_signed_response_alg: 'RS256',
      token_endpoint_auth_method: 'client_secret_basic',
    },
    extraClientMetadata: { properties: [FIRST_PARTY] },
    enabledJWA: {
      // No HMAC (HS256) anywhere: a client's stored "secret" is a digest, never a key.
      clientAuthSigningAlgValues: ['RS256', 'PS256', 'ES256', 'EdDSA'],
      idTokenSigningAlgValues: ['RS256', 'PS256', 'ES256', 'EdDSA'],
      requestObjectSigningAlgValues: ['RS256', 'PS256', 'ES256', 'EdDSA'],
      userinfoSigningAlgValues: ['RS256', 'PS256', 'ES256', 'EdDSA'],
      introspectionSigningAlgValues: ['RS256', 'PS256', 'ES256', 'EdDSA'],
      authorizationSigningAlgValues: ['RS256', 'PS256', 'ES256', 'EdDSA'],
    },
    features: {
      devInteractions: { enabled: false },
      // A client learns about, and ends, only the tokens issued to it.
      introspection: {
        enabled: true,
        allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId,
      },
      revocation: {
        enabled: true,
        allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId,
      },
      userinfo: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx) => askToSignOut(ctx),
        async postLogoutSuccessSource(ctx) {
          sendHtml(ctx, 200, signedOutPage());
        },
      },
    },
    // S256 only (oidc-provider 9 supports no other method); required of public clients.
    pkce: { required: (_ctx, client) => client.clientAuthMethod === 'none' },
    // Every client may refresh; each use rotates the token (and the old one is then spent).
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    ttl: {
      AccessToken: OIDC_TTL_SECONDS.AccessToken,
      AuthorizationCode: OIDC_TTL_SECONDS.AuthorizationCode,
      IdToken: OIDC_TTL_SECONDS.IdToken,
      RefreshToken: OIDC_TTL_SECONDS.RefreshToken,
      Grant: OIDC_TTL_SECONDS.Grant,
      Session: OIDC_TTL_SECONDS.Session,
      Interaction: OIDC_TTL_SECONDS.Interaction,
    },
    interactions: {
      url: (_ctx, interaction) => `${interactionBase}/${interaction.uid}`,
      policy: policy(deps),
    },
    // The operator's own applications are trusted with what they ask for: no consent page.
    async loadExistingGrant(ctx) {
      const { client, session, provider } = ctx.oidc;
      if (!client || !session?.accountId) return undefined;
      const grantId =
        (ctx.oidc.result?.consent as { grantId?: string } | undefined)?.grantId ??
        session.grantIdFor(client.clientId);
      const existing = grantId ? await provider.Grant.find(grantId) : undefined;
      if (!(client as unknown as Record<string, unknown>)[FIRST_PARTY]) return existing;
      const grant =
        existing ?? new provider.Grant({ clientId: client.clientId, accountId: session.accountId });
      grant.addOIDCScope([...ctx.oidc.requestParamScopes].join(' '));
      await grant.save();
      return grant;
    },
    clientBasedCORS(_ctx, origin, client) {
      return originsOf(client.redirectUris).includes(origin);
    },
    async renderError(ctx, out) {
      sendHtml(
        ctx,
        ctx.status >= 400 ? ctx.status : 400,
        problemPage(
          ctx.oidc?.route?.startsWith('end_session')
            ? 'Sign-out could not continue'
            : 'Sign-in could not continue',
          out.error_description ?? out.error,
        ),
      );
    },
  };

  const provider = new Provider(issuer, configuration);
  // Without a provider session in the browser (signed in to Tessera directly, or not at
  // all), oidc-provider answers `<issuer>/session/end` with a page that confirms itself by
  // script: any site could then end the Tessera session with a link. Tessera asks instead,
  // as it does with a provider session (logoutSource).
  provider.use(async (ctx, next) => {
    await next();
    const oidc = (ctx as KoaContextWithOIDC).oidc;
    if (oidc?.route === 'end_session' && ctx.status === 200 && !oidc.session?.accountId) {
      askToSignOut(ctx as KoaContextWithOIDC);
    }
  });
  // Client secrets are stored as SHA-256 digests: compare the digest, in constant time. The
  // client is the one Client.find read for this request (the adapter finds no revoked
  // client), its `client_secret` the stored digest: no second read of the same row.
  provider.Client.prototype.compareClientSecret = async function compare(
    this: { clientSecret?: string },
    presented: string,
  ) {
    return clientSecretMatches({ secret_hash: this.clientSecret ?? null }, presented);
  };
  return provider;
}
