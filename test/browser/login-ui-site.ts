import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An operator's own login UI (SERVICE_LOGIN_UI_URL) on its own origin, written the way
 * docs/browser-sign-in.md tells one to be: it reads `?flow=`, fetches the flow with
 * credentials (the binding cookie goes along and the CSRF token comes back), posts the
 * password as JSON and goes to `return_to`. `/done` stands for the application after it.
 */
export interface LoginUiSite {
  origin: string;
  /** Tessera's origin, known only once it listens. */
  tessera: string;
  close(): Promise<void>;
}

function uiPage(tessera: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Operator sign-in</title></head>
<body>
<h1>Operator sign-in</h1>
<p id="status">loading</p>
<form id="form" hidden>
  <label>Username <input name="username" autocomplete="username"></label>
  <label>Password <input name="password" type="password" autocomplete="current-password"></label>
  <button>Sign in</button>
</form>
<script>
const tessera = ${JSON.stringify(tessera)};
const flowId = new URLSearchParams(location.search).get('flow');
const status = document.getElementById('status');
const form = document.getElementById('form');
let csrfToken;
(async () => {
  const res = await fetch(tessera + '/v1/flows/' + encodeURIComponent(flowId), { credentials: 'include' });
  const flow = await res.json();
  csrfToken = flow.csrf_token;
  status.textContent = csrfToken ? 'ready' : 'no token';
  form.hidden = false;
})();
form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const res = await fetch(tessera + '/v1/flows/' + encodeURIComponent(flowId) + '/password', {
    method: 'POST',
    credentials: 'include',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      username: form.elements.username.value,
      password: form.elements.password.value,
      csrf_token: csrfToken,
    }),
  });
  const body = await res.json();
  if (res.ok) location.href = body.return_to;
  else status.textContent = 'error: ' + body.error;
});
</script>
</body></html>
`;
}

const DONE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Done</title></head>
<body><h1>Signed in</h1></body></html>
`;

export async function startLoginUiSite(): Promise<LoginUiSite> {
  const site = { tessera: '' } as LoginUiSite;
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/signin' && path !== '/done') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(path === '/signin' ? uiPage(site.tessera) : DONE);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  site.origin = `http://127.0.0.1:${port}`;
  site.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return site;
}
