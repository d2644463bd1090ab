import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  createSessionGuard,
  type SessionGuardOptions,
  type TesseraRequestSession,
} from './session-guard.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set by Tessera's middleware once the session cookie checked out. */
      tessera?: TesseraRequestSession;
    }
  }
}

export type { SessionGuardOptions as TesseraExpressOptions, TesseraRequestSession };

/**
 * Express middleware: checks the session cookie and puts `{session, token}` on
 * `req.tessera`; without a valid session it answers 401 (403 for a disabled identity), or
 * redirects a browser to the hosted login page with `loginRedirect`. Works on Express 4 and 5.
 */
export function tesseraSession(options: SessionGuardOptions): RequestHandler {
  const guard = createSessionGuard(options);
  return (req: Request, res: Response, next: NextFunction) => {
    guard
      .decide({
        method: req.method,
        url: req.originalUrl,
        cookie: req.headers.cookie,
        accept: req.headers.accept,
        host: req.headers.host,
        protocol: req.protocol,
      })
      .then((decision) => {
        if (decision.action === 'continue') {
          if (decision.session) req.tessera = decision.session;
          next();
        } else if (decision.action === 'redirect') {
          res.redirect(303, decision.location);
        } else {
          res.status(decision.status).json(decision.body);
        }
      }, next);
  };
}
