import { listAuditEntries } from '../../domain/audit/audit-query.js';
import { toAuditEntry } from '../../domain/audit/audit.js';
import { isOperator } from '../../domain/admin/operators.js';
import { PAGE_SIZE, parseAuditSearch, type ListQueryInput } from '../../domain/admin/search.js';
import { getIdentity, resolveIdentity } from '../../domain/identities/identity-service.js';
import { toIdentity } from '../../domain/identities/identity.js';
import { listIdentityLinks } from '../../domain/links/link-service.js';
import { listOwnPasskeys } from '../../domain/passkeys/passkey-service.js';
import { secondFactorStatus } from '../../domain/second-factor/enrolment.js';
import { listIdentitySessions } from '../../domain/sessions/session-list.js';
import type { AppDeps } from '../deps.js';
import { toSessionListItem } from '../session-list.js';
import type { IdentityPageInput } from './identity-page.js';

/** How many of an identity's newest audit events its page shows. */
const RECENT_EVENTS = 20;

/** Everything the identity page shows, fresh from the database; not_found for no such id. */
export async function loadIdentity(
  deps: AppDeps,
  id: string,
): Promise<Omit<IdentityPageInput, 'operator' | 'csrfToken' | 'notice'>> {
  const record = await getIdentity(deps.store, id);
  const [operator, links, passkeys, secondFactor, listed, events] = await Promise.all([
    isOperator(deps.store, id),
    listIdentityLinks(deps.store, id),
    listOwnPasskeys(deps.store, id),
    secondFactorStatus(deps.store, id),
    listIdentitySessions(deps, id),
    listAuditEntries(deps.store, { limit: RECENT_EVENTS, filter: { target_identity: id } }),
  ]);
  return {
    identity: toIdentity(record),
    isOperator: operator,
    hasPassword: record.password_hash !== null,
    links,
    passkeys,
    secondFactor,
    sessions: listed.sessions.map((row) => toSessionListItem(row, listed.identity)),
    events,
  };
}

/**
 * The audit entries a filter set matches (one page, or the export's `limit`), the
 * identity filter resolved from an id or a username (not_found when it names none).
 */
export async function loadAudit(deps: AppDeps, query: ListQueryInput, limit = PAGE_SIZE + 1) {
  const { search, identity } = parseAuditSearch(query, { limit });
  if (identity !== undefined) {
    search.target_identity = (await resolveIdentity(deps.store, identity)).id;
  }
  return (await deps.store.searchAuditRecords(search)).map(toAuditEntry);
}
