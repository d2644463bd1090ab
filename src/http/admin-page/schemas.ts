import { Type } from '@sinclair/typebox';
import { seeOther } from '../schemas.js';

/** A 200 that is one of the console's pages. */
export const Html = (description: string) =>
  Type.Unsafe({ description, content: { 'text/html': { schema: Type.String() } } });

/** What every console route may refuse with, as a page (respond.ts). */
export const REFUSALS = [403, 404, 422, 429, 503, 504];

export const SIGNED_OUT = seeOther('Not signed in: to /v1/login, with return_to back here');
