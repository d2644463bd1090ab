/**
 * The OpenID Connect floor: a bare oidc-provider (the version Tessera runs) with the
 * library's in-memory adapter (on a larger store, below), so the token endpoint and userinfo cost what the library
 * itself costs on this machine. It is configured as Tessera's provider
 * (src/http/oidc/provider.ts) where that changes the work of a request: one confidential
 * client authenticating with `client_secret_basic`, an RS256 2048-bit key made by Tessera's
 * own key generator, PKCE S256 (required here; the bench's relying party always sends it to
 * both), the same lifetimes, refresh tokens issued to every client and rotated on every use,
 * the same scopes and claims (profile claims in the ID token too), userinfo on.
 *
 * Nothing is read from a database: the account's claims are built in memory. The login and
 * consent interactions (unmeasured: they only make the codes the bench redeems) take the
 * account from the `bench_account` cookie and grant the requested scopes.
 *
 * Environment: FLOOR_PORT, FLOOR_OIDC_CLIENT_ID, FLOOR_OIDC_CLIENT_SECRET,
 * FLOOR_OIDC_REDIRECT_URI. The issuer is the server's root, http://127.0.0.1:FLOOR_PORT.
 */
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import Provider, { type Configuration, type InteractionResults } from 'oidc-provider';
import MemoryAdapter from 'oidc-provider/lib/adapters/memory_adapter.js';
import LRU from 'oidc-provider/lib/helpers/lru.js';
import { generateSigningKey } from '../src/adapters/oidc-signing-key.js';
import { OIDC_TTL_SECONDS } from '../src/domain/oidc/lifetimes.js';

const port = Number(process.env.FLOOR_PORT ?? 0);
const issuer = `http://127.0.0.1:${port}`;

/**
 * The library's in-memory adapter keeps at most 1,000 entries by default and evicts the
 * oldest: a round's codes (a thousand or more, made before it) would be evicted before they
 * are redeemed. The same adapter on a store that evicts nothing a run can fill.
 */
const store = new LRU({ maxSize: 10_000_000 });

const configuration: Configuration = {
  adapter: (model: string) => new MemoryAdapter(model, store, 0),
  clients: [
    {
      client_id: process.env.FLOOR_OIDC_CLIENT_ID ?? 'bench',
      client_secret: process.env.FLOOR_OIDC_CLIENT_SECRET ?? 'bench-secret',
      redirect_uris: [process.env.FLOOR_OIDC_REDIRECT_URI ?? 'https://app.example/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'RS256',
    },
  ],
  jwks: { keys: [generateSigningKey().privateJwk as never] },
  cookies: { keys: ['oidc-floor-cookies'] },
  findAccount(_ctx, sub) {
    return {
      accountId: sub,
      claims: () => ({
        sub,
        preferred_username: 'bench-user',
        name: 'Bench User',
        updated_at: 1_735_689_600,
      }),
    };
  },
  claims: {
    openid: ['sub', 'acr', 'amr', 'auth_time'],
    profile: ['preferred_username', 'name', 'picture', 'updated_at'],
    email: ['email', 'email_verified'],
  },
  scopes: ['openid', 'profile', 'email', 'offline_access'],
  conformIdTokenClaims: false,
  responseTypes: ['code'],
  features: {
    devInteractions: { enabled: false },
    introspection: { enabled: true },
    revocation: { enabled: true },
    userinfo: { enabled: true },
  },
  pkce: { required: () => true },
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  rotateRefreshToken: true,
  ttl: { ...OIDC_TTL_SECONDS },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
};

const provider = new Provider(issuer, configuration);
const handler = provider.callback();

/** Signs in the cookie's account, then grants what the client asked for. */
async function interaction(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  let result: InteractionResults;
  if (details.prompt.name === 'login') {
    const accountId = /(?:^|;\s*)bench_account=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    if (!accountId) throw new Error('no bench_account cookie');
    result = { login: { accountId } };
  } else {
    const grant = new provider.Grant({
      accountId: details.session!.accountId,
      clientId: String(details.params.client_id),
    });
    grant.addOIDCScope(String(details.params.scope));
    result = { consent: { grantId: await grant.save() } };
  }
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
}

const server = createServer((req, res) => {
  if (req.url === '/healthz') return void res.end('ok');
  if (req.url?.startsWith('/interaction/')) {
    return void interaction(req, res).catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  }
  void handler(req, res);
});
// Nothing to flush: the provider keeps everything in memory.
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => process.exit(0));
server.listen(port, '127.0.0.1');
