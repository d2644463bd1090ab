import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for a web application on its own origin: a landing page for `return_to` and
 * an empty page the tests run `fetch` from. Port and scheme make it a different origin
 * from Tessera on the same host; the same host keeps it same-site, as an app and its
 * identity service on sibling subdomains are.
 */
export interface AppSite {
  origin: string;
  close(): Promise<void>;
}

const PAGE = (title: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>
<body><h1>${title}</h1></body></html>
`;

export async function startAppSite(title: string): Promise<AppSite> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path === '/favicon.ico') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(PAGE(`${title} ${path}`));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
