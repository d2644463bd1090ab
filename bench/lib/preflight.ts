/** Before a scenario is measured: one request of it must answer as expected. */
import type { BenchDatabase } from './databases.js';
import { SIGNUP_PASSWORD, type ScenarioName } from './load.js';

const json = { 'content-type': 'application/json' };

/** Checks one request of the scenario answers as expected; returns why not otherwise. */
export async function preflight(
  url: string,
  scenario: ScenarioName,
  db: BenchDatabase,
): Promise<{ ok: true } | { ok: false; missing: boolean; note: string }> {
  const bearer = { authorization: `Bearer ${db.data.serviceToken}` };
  const token = db.data.tokens[0]!;
  let response: Response;
  switch (scenario) {
    case 'whoami':
      response = await fetch(`${url}/v1/whoami`, {
        headers: { cookie: `service_session=${token}` },
      });
      break;
    case 'verify':
      response = await fetch(`${url}/v1/sessions/verify`, {
        method: 'POST',
        headers: { ...bearer, ...json },
        body: JSON.stringify({ token }),
      });
      break;
    case 'identity':
      response = await fetch(`${url}/v1/identities/${db.data.identityIds[0]}`, {
        headers: bearer,
      });
      break;
    case 'link':
      response = await createLinks(url, db);
      break;
    case 'login':
      response = await signIn(url, db);
      break;
    case 'password':
      response = await fetch(`${url}/v1/authenticate/password`, {
        method: 'POST',
        headers: { ...bearer, ...json },
        body: JSON.stringify({ username: db.data.usernames[0], password: db.data.password }),
      });
      break;
    case 'signup': {
      response = await fetch(`${url}/v1/registration`, { headers: { accept: 'application/json' } });
      if (response.status !== 200) break;
      const flow = (await response.json()) as { id: string; csrf_token: string };
      response = await fetch(`${url}/v1/registration/${flow.id}/password`, {
        method: 'POST',
        headers: { ...json, accept: 'application/json' },
        body: JSON.stringify({
          username: `preflight${Date.now().toString(36)}`,
          password: SIGNUP_PASSWORD,
          csrf_token: flow.csrf_token,
        }),
      });
      if (response.status === 201) return { ok: true };
      break;
    }
    default:
      // The OIDC scenarios (bench/lib/oidc.ts) fail at their first authorization instead.
      throw new Error(`no preflight for ${scenario}`);
  }
  if (response.status === 200) return { ok: true };
  const body = (await response.text()).slice(0, 200);
  return {
    ok: false,
    missing: response.status === 404 && body.includes('not_found'),
    note: `${response.status} ${body}`,
  };
}

/** One password sign-in through a login flow (`GET /v1/login`, then the password). */
export async function signIn(url: string, db: BenchDatabase): Promise<Response> {
  const started = await fetch(`${url}/v1/login`, { headers: { accept: 'application/json' } });
  if (started.status !== 200) return started;
  const flow = (await started.json()) as { id: string; csrf_token: string };
  return fetch(`${url}/v1/flows/${flow.id}/password`, {
    method: 'POST',
    headers: { ...json, accept: 'application/json' },
    body: JSON.stringify({
      username: db.data.usernames[0],
      password: db.data.password,
      csrf_token: flow.csrf_token,
    }),
  });
}

/** The returning users of the link scenario: each subject's first sign-in creates it (201). */
async function createLinks(url: string, db: BenchDatabase): Promise<Response> {
  let last: Response | undefined;
  const subjects = [...db.data.linkSubjects];
  const worker = async () => {
    for (let next = subjects.shift(); next; next = subjects.shift()) {
      const response = await fetch(`${url}/v1/authenticate/link`, {
        method: 'POST',
        headers: { authorization: `Bearer ${db.data.serviceToken}`, ...json },
        body: JSON.stringify({
          provider: 'bench',
          subject: next.subject,
          seed: { username: next.username, display_name: next.username },
        }),
      });
      if (response.status !== 200 && response.status !== 201) {
        subjects.length = 0;
        last = response;
        return;
      }
      await response.arrayBuffer();
      last = response;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  if (last && last.status === 201) return new Response(null, { status: 200 });
  return last!;
}

/** Size of the Session object whoami answers (verify's when whoami does not exist yet). */
export async function sessionBodyBytes(url: string, db: BenchDatabase): Promise<number> {
  const token = db.data.tokens[0]!;
  const whoami = await fetch(`${url}/v1/whoami`, {
    headers: { cookie: `service_session=${token}` },
  });
  if (whoami.status === 200) return (await whoami.arrayBuffer()).byteLength;
  await whoami.arrayBuffer();
  const verify = await fetch(`${url}/v1/sessions/verify`, {
    method: 'POST',
    headers: { authorization: `Bearer ${db.data.serviceToken}`, ...json },
    body: JSON.stringify({ token }),
  });
  if (verify.status !== 200) throw new Error(`verify probe answered ${verify.status}`);
  return (await verify.arrayBuffer()).byteLength;
}
