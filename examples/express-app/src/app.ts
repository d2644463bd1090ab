import express, { type Request, type Response } from 'express';
import { createTesseraClient, type Session } from '@tessera/client';
import { tesseraSession } from '@tessera/client/express';

export interface ExampleOptions {
  /** Tessera's URL, as this server and the browser both reach it. */
  tesseraUrl: string;
  /** This app's own origin as the browser sees it (the login page returns here). */
  appUrl: string;
  /** A service token with `introspect`: sessions are then verified with it; else whoami. */
  serviceToken?: string;
  /** Accept tokens minted before Tessera's tokens carried a checksum. */
  acceptLegacyTokens?: boolean;
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${escape(title)} · Example app</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}
button,a.button{font:inherit;padding:.4rem 1rem}</style></head>
<body><h1>${escape(title)}</h1>
${body}
</body></html>`;
}

function whoIs(session: Session): string {
  const { identity } = session;
  return `<p>Signed in as <strong id="display-name">${escape(identity.display_name)}</strong>
(<span id="username">${escape(identity.username)}</span>).</p>
<p>Session <code>${escape(session.id)}</code>, via ${escape(session.authenticated_via)},
until ${escape(session.expires_at)}.</p>
<form method="post" action="/logout"><button type="submit">Log out</button></form>`;
}

/**
 * An Express app that leaves sign-in to Tessera: `/` shows who is signed in (if anyone),
 * `/account` needs a session and sends a browser without one to the hosted login page,
 * `/logout` ends the session.
 */
export function createExampleApp(options: ExampleOptions): express.Express {
  const tessera = createTesseraClient({
    baseUrl: options.tesseraUrl,
    serviceToken: options.serviceToken,
    acceptLegacyTokens: options.acceptLegacyTokens,
  });
  const guard = {
    baseUrl: options.tesseraUrl,
    serviceToken: options.serviceToken,
    acceptLegacyTokens: options.acceptLegacyTokens,
    appUrl: options.appUrl,
  };
  const signedIn = tesseraSession({ ...guard, loginRedirect: true });
  const maybeSignedIn = tesseraSession({ ...guard, required: false });

  const app = express();
  app.disable('x-powered-by');

  app.get('/', maybeSignedIn, (req: Request, res: Response) => {
    const body = req.tessera
      ? `${whoIs(req.tessera.session)}<p><a href="/account">Your account</a></p>`
      : `<p id="signed-out">You are not signed in.</p><p><a class="button" href="/login">Sign in</a></p>`;
    res.type('html').send(page('Example app', body));
  });

  // The hosted login page, coming back to the home page once signed in.
  app.get('/login', (_req, res) => {
    res.redirect(303, tessera.loginPageUrl(`${options.appUrl}/`));
  });

  app.get('/account', signedIn, (req, res) => {
    res.type('html').send(page('Your account', whoIs(req.tessera!.session)));
  });

  app.post('/logout', signedIn, async (req, res) => {
    // A form on another site must not log the user out.
    if (req.headers.origin !== undefined && req.headers.origin !== options.appUrl) {
      res.status(403).json({ error: 'forbidden' });
      return;
    }
    await tessera.logout(req.tessera!.token);
    // Tessera's own cookie is cleared when the browser calls its logout; here the app's
    // server called it, so the app clears the cookie (cookies are per host, not per port).
    res.clearCookie('service_session', {
      path: '/',
      httpOnly: true,
      secure: true,
      sameSite: 'lax',
    });
    res.redirect(303, '/');
  });

  return app;
}
