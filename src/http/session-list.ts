import { Type } from '@sinclair/typebox';
import type { SessionListing } from '../domain/sessions/session.js';
import { SIGN_IN_METHOD_IDS } from '../domain/sign-in/methods.js';
import { toIso } from '../lib/clock.js';
import { describeUserAgent } from '../lib/user-agent.js';
import { StringEnum, Timestamp } from './schemas.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) =>
  Type.Union([schema, Type.Null()]);

const SESSION_LIST_ITEM_FIELDS = {
  id: Type.String({ format: 'uuid' }),
  identity_id: Type.String({ format: 'uuid' }),
  authenticated_via: StringEnum(SIGN_IN_METHOD_IDS),
  issued_at: Timestamp,
  expires_at: Timestamp,
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
    'A live session in a list: when and how it started, its device, its last use. Never its token.',
});

export const AccountSessionSchema = Type.Object(
  {
    ...SESSION_LIST_ITEM_FIELDS,
    current: Type.Boolean({ description: 'The session making this request ("this device")' }),
  },
  { description: "One of the signed-in user's live sessions." },
);

export interface SessionListItem {
  id: string;
  identity_id: string;
  authenticated_via: SessionListing['authenticated_via'];
  issued_at: string;
  expires_at: string;
  last_used_at: string | null;
  user_agent: string | null;
  client_address: string | null;
  browser: string | null;
  os: string | null;
}

export function toSessionListItem(listing: SessionListing): SessionListItem {
  return {
    id: listing.id,
    identity_id: listing.identity_id,
    authenticated_via: listing.authenticated_via,
    issued_at: toIso(listing.issued_at),
    expires_at: toIso(listing.expires_at),
    last_used_at: listing.last_used_at === null ? null : toIso(listing.last_used_at),
    user_agent: listing.user_agent,
    client_address: listing.client_address,
    ...describeUserAgent(listing.user_agent),
  };
}
