import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { grantOperator } from '../../src/domain/admin/operators.js';
import type { AuditRecord } from '../../src/domain/audit/audit.js';
import type { TestApp } from '../helpers/app.js';
import { FORM } from '../flows/helpers.js';
import { cookieOf, enrolledIdentity, signInWithCode } from '../second-factor/helpers.js';

export const CLI_ACTOR = { service_name: 'cli', service_id: null };

/**
 * An operator with TOTP, granted the role like `tessera admin grant`, and signed in again
 * with a code: `session` is aal2 and fresh; `aal1` is the password-only session it enrolled
 * TOTP from.
 */
export async function operatorAtAal2(t: TestApp, username = 'root') {
  const enrolled = await enrolledIdentity(t, username);
  await grantOperator(t.deps, CLI_ACTOR, username);
  const session = await signInWithCode(t, username, enrolled.secret);
  return { ...enrolled, aal1: enrolled.session, session };
}

/** A console page with the browser's cookie, as a navigating browser asks for it. */
export function getPage(t: TestApp, session: string | null, url: string) {
  return t.inject({
    method: 'GET',
    url,
    headers: { ...(session ? cookieOf(session) : {}), accept: 'text/html' },
  });
}

/** The CSRF token of the console's forms, read from a page. */
export function csrfOf(page: LightMyRequestResponse): string {
  const match = /name="csrf_token" value="([^"]+)"/.exec(page.body);
  expect(match, 'a form with a CSRF token').not.toBeNull();
  return match![1]!;
}

/** A form post from our own origin, as the console's forms send it. */
export function postForm(
  t: TestApp,
  session: string,
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) {
  return t.inject({
    method: 'POST',
    url,
    headers: {
      ...cookieOf(session),
      'content-type': FORM,
      origin: 'http://localhost',
      ...headers,
    },
    payload: new URLSearchParams(fields).toString(),
  });
}

/** The audit rows with this action, oldest first, once the buffer is flushed. */
export async function auditRows(t: TestApp, action: string): Promise<AuditRecord[]> {
  await t.deps.audit.flush();
  const rows = await t.deps.store.listAuditRecords(1000, { actions: [action] });
  return rows.reverse();
}
