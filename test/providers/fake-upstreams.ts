import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type JWK, SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';

/**
 * Test doubles of remote providers, served by the test on 127.0.0.1: an OpenID Connect
 * issuer whose ID tokens the test shapes (to tamper with them), and GitHub's OAuth and API
 * endpoints as GitHub documents them. Both check PKCE like a real server: the code's
 * challenge must be the S256 of the verifier redeemed with it.
 */

interface Issued {
  challenge: string;
  method: string;
  nonce: string | null;
  /** The account the code stands for. */
  subject: string;
}

function body(request: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => resolve(new URLSearchParams(text)));
    request.on('error', reject);
  });
}

function send(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(value));
}

function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** What the test wants the next ID token to say (or be signed with). */
export interface Tampering {
  claims?: Record<string, unknown>;
  /** Sign with a key the JWKS does not publish. */
  foreignKey?: boolean;
}

export interface FakeIssuer {
  issuer: string;
  clientId: string;
  secret: string;
  /** Issues a code for an authorization URL the downstream built, as the user's consent would. */
  authorize(url: string, subject: string): string;
  /** Claims (email, name...) of each subject's ID tokens. */
  profiles: Map<string, Record<string, unknown>>;
  next: Tampering;
  tokenRequests: number;
  close(): Promise<void>;
}

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

/**
 * The issuers' RSA keys, made once per test worker: a 2048-bit key pair takes 0.4-0.6 s of
 * CPU on a 2-core machine, and the suite starts seven issuers. Each issuer is its own `iss`,
 * so sharing the keys lets no token of one pass for another's.
 */
let issuerKeys: Promise<{ own: KeyPair; foreign: KeyPair }> | undefined;

export async function startFakeIssuer(): Promise<FakeIssuer> {
  const alg = 'RS256';
  issuerKeys ??= Promise.all([generateKeyPair(alg), generateKeyPair(alg)]).then(
    ([own, foreign]) => ({ own, foreign }),
  );
  const { own, foreign } = await issuerKeys;
  const jwk: JWK = { ...(await exportJWK(own.publicKey)), kid: 'k1', alg, use: 'sig' };
  const codes = new Map<string, Issued>();
  let origin = '';
  const fake: FakeIssuer = {
    issuer: '',
    clientId: 'tessera-downstream',
    secret: randomBytes(16).toString('hex'),
    profiles: new Map(),
    next: {},
    tokenRequests: 0,
    authorize(url, subject) {
      const params = new URL(url).searchParams;
      const code = randomBytes(16).toString('base64url');
      codes.set(code, {
        challenge: params.get('code_challenge') ?? '',
        method: params.get('code_challenge_method') ?? '',
        nonce: params.get('nonce'),
        subject,
      });
      return code;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };

  async function idToken(issued: Issued, key: CryptoKey): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      nonce: issued.nonce,
      ...fake.profiles.get(issued.subject),
      ...fake.next.claims,
    };
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg, kid: 'k1' })
      .setIssuer(fake.issuer)
      .setSubject(issued.subject)
      .setAudience((fake.next.claims?.aud as string | undefined) ?? fake.clientId)
      .setIssuedAt(now)
      .setExpirationTime((fake.next.claims?.exp as number | undefined) ?? now + 300);
    return jwt.sign(key);
  }

  const server = createServer((request, response) => {
    void (async () => {
      const path = new URL(request.url ?? '/', origin).pathname;
      if (path === '/.well-known/openid-configuration') {
        return send(response, 200, {
          issuer: fake.issuer,
          authorization_endpoint: `${origin}/authorize`,
          token_endpoint: `${origin}/token`,
          jwks_uri: `${origin}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: [alg],
          token_endpoint_auth_methods_supported: ['client_secret_basic'],
          code_challenge_methods_supported: ['S256'],
        });
      }
      if (path === '/jwks') return send(response, 200, { keys: [jwk] });
      if (path === '/token' && request.method === 'POST') {
        fake.tokenRequests += 1;
        const form = await body(request);
        // RFC 6749 2.3.1: both parts form-encoded, then base64.
        const [id, secret] = Buffer.from(
          (request.headers.authorization ?? '').replace(/^Basic /, ''),
          'base64',
        )
          .toString('utf8')
          .split(':')
          .map((part) => decodeURIComponent(part.replaceAll('+', ' ')));
        if (id !== fake.clientId || secret !== fake.secret) {
          return send(response, 401, { error: 'invalid_client' });
        }
        const issued = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        if (!issued || issued.method !== 'S256' || s256(verifier) !== issued.challenge) {
          return send(response, 400, { error: 'invalid_grant' });
        }
        const token = await idToken(
          issued,
          fake.next.foreignKey ? foreign.privateKey : own.privateKey,
        );
        return send(response, 200, {
          access_token: randomBytes(16).toString('hex'),
          token_type: 'Bearer',
          id_token: token,
          expires_in: 300,
        });
      }
      return send(response, 404, { error: 'not_found' });
    })().catch((error: unknown) => send(response, 500, { error: String(error) }));
  });
  origin = await listen(server);
  fake.issuer = origin;
  return fake;
}

export interface GitHubUser {
  id: number;
  login: string;
  name: string | null;
  emails: { email: string; primary: boolean; verified: boolean; visibility: string | null }[];
}

export interface FakeGitHub {
  /** The `base_url` of an Enterprise Server: the API is under /api/v3. */
  baseUrl: string;
  clientId: string;
  secret: string;
  users: Map<number, GitHubUser>;
  authorize(url: string, userId: number): string;
  close(): Promise<void>;
}

export async function startFakeGitHub(): Promise<FakeGitHub> {
  const codes = new Map<string, { challenge: string; userId: number }>();
  const tokens = new Map<string, number>();
  let origin = '';
  const fake: FakeGitHub = {
    baseUrl: '',
    clientId: 'Iv1.fakegithub',
    secret: randomBytes(20).toString('hex'),
    users: new Map(),
    authorize(url, userId) {
      const code = randomBytes(10).toString('hex');
      codes.set(code, { challenge: new URL(url).searchParams.get('code_challenge') ?? '', userId });
      return code;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = createServer((request, response) => {
    void (async () => {
      const path = new URL(request.url ?? '/', origin).pathname;
      if (path === '/login/oauth/access_token' && request.method === 'POST') {
        const form = await body(request);
        // As GitHub: an error is a 200 with an `error` field.
        if (form.get('client_id') !== fake.clientId || form.get('client_secret') !== fake.secret) {
          return send(response, 200, { error: 'incorrect_client_credentials' });
        }
        const issued = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        if (!issued || s256(form.get('code_verifier') ?? '') !== issued.challenge) {
          return send(response, 200, { error: 'bad_verification_code' });
        }
        const token = `gho_${randomBytes(18).toString('hex')}`;
        tokens.set(token, issued.userId);
        return send(response, 200, {
          access_token: token,
          token_type: 'bearer',
          scope: 'read:user,user:email',
        });
      }
      const userId = tokens.get((request.headers.authorization ?? '').replace(/^Bearer /i, ''));
      const user = userId === undefined ? undefined : fake.users.get(userId);
      if (!user) return send(response, 401, { message: 'Bad credentials' });
      if (path === '/api/v3/user')
        return send(response, 200, { id: user.id, login: user.login, name: user.name });
      if (path === '/api/v3/user/emails') return send(response, 200, user.emails);
      return send(response, 404, { message: 'Not Found' });
    })().catch((error: unknown) => send(response, 500, { error: String(error) }));
  });
  origin = await listen(server);
  fake.baseUrl = origin;
  return fake;
}
