import { Type } from '@sinclair/typebox';
import type { IdentityRecord } from '../domain/identities/identity.js';
import { type Session, type SessionListing, toSession } from '../domain/sessions/session.js';
import { describeUserAgent } from '../lib/user-agent.js';
import { toIso } from '../lib/clock.js';
import { SessionSchema } from './schemas.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) =>
  Type.Union([schema, Type.Null()]);

/**
 * A listed session is a Session object (docs/api.md 2.3: `identity` embedded, `aal`,
 * `authenticated_via`) with what only the lists show: the device and the last use.
 * `identity_id` stays from the first version of the lists, for the clients that read it.
 */
const SESSION_LIST_ITEM_FIELDS = {
  ...SessionSchema.properties,
  identity_id: Type.String({ format: 'uuid', description: 'The same as identity.id' }),
  last_used_at: Nullable(
    Type.String({
      format: 'date-time',
      description:
        'Last whoami or verify, to within 5 minutes; null for sessions from before it was kept',
    }),
  ),
  user_agent: Nullable(Type.String({ description: 'The User-Agent the session was started with' })),
  client_address: Nullable(Type.String({ description: "The end user's IP address at sign-in" })),
  browser: Nullable(Type.String({ description: 'Parsed from user_agent, e.g. "Firefox 132"' })),
  os: Nullable(Type.String({ description: 'Parsed from user_agent, e.g. "Windows 10"' })),
};

export const SessionListItemSchema = Type.Object(SESSION_LIST_ITEM_FIELDS, {
  description:
    'A live session in a list: the Session object, with the device it was started from and its last use. Never its token.',
});

export const AccountSessionSchema = Type.Object(
  {
    ...SESSION_LIST_ITEM_FIELDS,
    current: Type.Boolean({ description: 'The session making this request ("this device")' }),
  },
  { description: "One of the signed-in user's live sessions." },
);

export interface SessionListItem extends Session {
  identity_id: string;
  last_used_at: string | null;
  user_agent: string | null;
  client_address: string | null;
  browser: string | null;
  os: string | null;
}

export function toSessionListItem(
  listing: SessionListing,
  identity: IdentityRecord,
): SessionListItem {
  return {
    ...toSession(listing, identity),
    identity_id: listing.identity_id,
    last_used_at: listing.last_used_at === null ? null : toIso(listing.last_used_at),
    user_agent: listing.user_agent,
    client_address: listing.client_address,
    ...describeUserAgent(listing.user_agent),
  };
}
