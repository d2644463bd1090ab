/**
 * Forward-only migrations. The DDL is plain SQL that both SQLite and PostgreSQL accept;
 * each entry runs once, in order, inside the dialect's migration lock (see the adapters),
 * so two processes starting together apply each migration exactly once.
 */
export interface Migration {
  id: string;
  statements: string[];
}

export const migrations: Migration[] = [
  {
    id: '0001_core',
    statements: [
      `CREATE TABLE identities (
        id TEXT PRIMARY KEY,
        username TEXT NOT NULL UNIQUE,
        display_name TEXT NOT NULL,
        avatar_url TEXT,
        state TEXT NOT NULL,
        password_hash TEXT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      )`,
      `CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        identity_id TEXT NOT NULL REFERENCES identities(id),
        authenticated_via TEXT NOT NULL,
        issued_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        revoked_at BIGINT
      )`,
      `CREATE INDEX sessions_identity_idx ON sessions(identity_id)`,
      `CREATE INDEX sessions_expires_idx ON sessions(expires_at)`,
      `CREATE TABLE service_tokens (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        token_hash TEXT NOT NULL UNIQUE,
        grants TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        revoked_at BIGINT
      )`,
      `CREATE TABLE audit_log (
        id TEXT PRIMARY KEY,
        at BIGINT NOT NULL,
        action TEXT NOT NULL,
        service_name TEXT,
        service_id TEXT,
        target_identity TEXT,
        outcome TEXT NOT NULL,
        details TEXT NOT NULL
      )`,
      `CREATE TABLE rate_limits (
        key TEXT PRIMARY KEY,
        count INTEGER NOT NULL,
        reset_at BIGINT NOT NULL
      )`,
      `CREATE TABLE flows (
        id TEXT PRIMARY KEY,
        csrf_token TEXT NOT NULL,
        return_to TEXT,
        state TEXT NOT NULL,
        failed_attempts INTEGER NOT NULL,
        issued_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
      )`,
      `CREATE INDEX flows_expires_idx ON flows(expires_at)`,
      `CREATE TABLE flow_errors (
        flow_id TEXT NOT NULL REFERENCES flows(id) ON DELETE CASCADE,
        at BIGINT NOT NULL,
        error TEXT NOT NULL
      )`,
      `CREATE INDEX flow_errors_flow_idx ON flow_errors(flow_id, at)`,
      `CREATE INDEX audit_log_at_idx ON audit_log(at)`,
      `CREATE TABLE links (
        provider TEXT NOT NULL,
        subject TEXT NOT NULL,
        identity_id TEXT NOT NULL REFERENCES identities(id),
        verified_at BIGINT,
        linked_at BIGINT NOT NULL,
        PRIMARY KEY (provider, subject)
      )`,
      `CREATE INDEX links_identity_idx ON links(identity_id, linked_at)`,
    ],
  },
  {
    // docs/passkeys.md. A passkey's credential id is unique across identities: it is how a
    // usernameless sign-in finds its owner. A challenge is bound to one flow (sign-in) or
    // one session (registration) and goes with it; only its SHA-256 is kept.
    id: '0002_passkeys',
    statements: [
      `CREATE TABLE passkeys (
        id TEXT PRIMARY KEY,
        identity_id TEXT NOT NULL REFERENCES identities(id),
        credential_id TEXT NOT NULL UNIQUE,
        public_key TEXT NOT NULL,
        sign_count BIGINT NOT NULL,
        transports TEXT NOT NULL,
        device_type TEXT NOT NULL,
        backed_up INTEGER NOT NULL,
        name TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        last_used_at BIGINT
      )`,
      `CREATE INDEX passkeys_identity_idx ON passkeys(identity_id, created_at)`,
      `CREATE TABLE webauthn_challenges (
        binding TEXT PRIMARY KEY,
        flow_id TEXT REFERENCES flows(id) ON DELETE CASCADE,
        session_id TEXT REFERENCES sessions(id) ON DELETE CASCADE,
        challenge_hash TEXT NOT NULL,
        expires_at BIGINT NOT NULL
      )`,
      `CREATE INDEX webauthn_challenges_expires_idx ON webauthn_challenges(expires_at)`,
    ],
  },
  {
    id: '0003_second_factor',
    statements: [
      // The assurance a session reached (docs/two-factor.md); every earlier session was one factor.
      `ALTER TABLE sessions ADD COLUMN aal TEXT NOT NULL DEFAULT 'aal1'`,
      // A flow waiting for its second factor remembers whose it is and how the first step went.
      `ALTER TABLE flows ADD COLUMN identity_id TEXT`,
      `ALTER TABLE flows ADD COLUMN first_method TEXT`,
      `CREATE TABLE totp_factors (
        identity_id TEXT PRIMARY KEY REFERENCES identities(id),
        secret_sealed TEXT NOT NULL,
        confirmed_at BIGINT,
        last_used_step BIGINT,
        created_at BIGINT NOT NULL
      )`,
      `CREATE TABLE recovery_codes (
        identity_id TEXT NOT NULL REFERENCES identities(id),
        code_hash TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        used_at BIGINT,
        PRIMARY KEY (identity_id, code_hash)
      )`,
    ],
  },
  {
    // Sessions per device (docs/account.md): where a session was started, and when it was
    // last used (updated at most every few minutes, off the answer's path). NULL for
    // sessions minted before this migration and for values a service did not state.
    id: '0004_session_devices',
    statements: [
      `ALTER TABLE sessions ADD COLUMN user_agent TEXT`,
      `ALTER TABLE sessions ADD COLUMN client_address TEXT`,
      `ALTER TABLE sessions ADD COLUMN last_used_at BIGINT`,
    ],
  },
  {
    // OpenID Connect provider (docs/oidc.md, "Storage"): its models, the client registry,
    // the signing keys. Unused while SERVICE_OIDC_ISSUER is unset.
    id: '0005_oidc',
    statements: [
      `CREATE TABLE oidc_models (
        kind TEXT NOT NULL,
        id TEXT NOT NULL,
        payload TEXT NOT NULL,
        grant_id TEXT,
        client_id TEXT,
        uid TEXT,
        user_code TEXT,
        consumed_at BIGINT,
        expires_at BIGINT NOT NULL,
        PRIMARY KEY (kind, id)
      )`,
      `CREATE INDEX oidc_models_grant_idx ON oidc_models(grant_id)`,
      `CREATE INDEX oidc_models_client_idx ON oidc_models(client_id)`,
      `CREATE INDEX oidc_models_uid_idx ON oidc_models(uid)`,
      `CREATE INDEX oidc_models_user_code_idx ON oidc_models(user_code)`,
      `CREATE INDEX oidc_models_expires_idx ON oidc_models(expires_at)`,
      `CREATE TABLE oidc_clients (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        secret_hash TEXT,
        token_endpoint_auth_method TEXT NOT NULL,
        redirect_uris TEXT NOT NULL,
        post_logout_redirect_uris TEXT NOT NULL,
        first_party INTEGER NOT NULL,
        created_at BIGINT NOT NULL,
        revoked_at BIGINT
      )`,
      `CREATE TABLE oidc_signing_keys (
        id TEXT PRIMARY KEY,
        alg TEXT NOT NULL,
        public_jwk TEXT NOT NULL,
        sealed_private_jwk TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        activates_at BIGINT NOT NULL
      )`,
    ],
  },
  {
    // Tokens gained a checksum (docs/tokens.md). Rows record the format they were minted
    // in; the default marks every row written before, or by a process of an older version
    // during a rolling upgrade, as pre-checksum. The partial indexes hold only such rows,
    // so "do any remain?" is one index probe and fresh inserts never touch them.
    id: '0007_token_format',
    statements: [
      `ALTER TABLE sessions ADD COLUMN token_format TEXT NOT NULL DEFAULT 'legacy'`,
      `ALTER TABLE service_tokens ADD COLUMN token_format TEXT NOT NULL DEFAULT 'legacy'`,
      `ALTER TABLE flows ADD COLUMN token_format TEXT NOT NULL DEFAULT 'legacy'`,
      `CREATE INDEX sessions_legacy_token_idx ON sessions(expires_at)
        WHERE token_format = 'legacy' AND revoked_at IS NULL`,
      `CREATE INDEX flows_legacy_token_idx ON flows(expires_at) WHERE token_format = 'legacy'`,
    ],
  },
  {
    // The transactional outbox (docs/mail.md): deliveries written in the transaction of the
    // change that causes them, sent by the workers of every `tessera serve`. A claim reads
    // outbox_due_idx; `tessera mail list --state` reads outbox_state_idx.
    id: '0008_outbox',
    statements: [
      `CREATE TABLE outbox (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        target TEXT NOT NULL,
        topic TEXT NOT NULL,
        payload TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        created_at BIGINT NOT NULL,
        next_attempt_at BIGINT NOT NULL,
        claim_token TEXT,
        last_error TEXT,
        updated_at BIGINT NOT NULL
      )`,
      `CREATE INDEX outbox_due_idx ON outbox(state, next_attempt_at)`,
      `CREATE INDEX outbox_state_idx ON outbox(state, created_at)`,
    ],
  },
  {
    // Email addresses on identities (docs/api.md, "Email addresses"). Stored in canonical
    // form (lowercased, domain as punycode), so a plain UNIQUE index makes an address
    // belong to one identity at most on both databases, whichever instance writes; NULLs
    // (no address) never collide. Verification is a time, not a flag: no boolean type
    // differs between the two databases.
    id: '0009_identity_email',
    statements: [
      `ALTER TABLE identities ADD COLUMN email TEXT`,
      `ALTER TABLE identities ADD COLUMN email_verified_at BIGINT`,
      `CREATE UNIQUE INDEX identities_email_idx ON identities(email)`,
    ],
  },
  {
    // Operators of the admin console (docs/admin.md): the identities granted the role by
    // `tessera admin grant`. A row of its own, not a column on identities: the role is
    // rare, and granting it never touches the identity row (its updated_at, a profile edit
    // racing with it).
    id: '0010_operators',
    statements: [
      `CREATE TABLE operators (
        identity_id TEXT PRIMARY KEY REFERENCES identities(id),
        granted_at BIGINT NOT NULL
      )`,
    ],
  },
  {
    // Mailed one-time codes (docs/verification.md): an address verification today, recovery
    // and email sign-in codes later, one table and one set of checks. A pending address
    // change lives here (the row's address), not on identities: the identity's address
    // changes only once the code is used. Every state change is a conditional UPDATE.
    id: '0011_mail_codes',
    statements: [
      `CREATE TABLE mail_codes (
        id TEXT PRIMARY KEY,
        purpose TEXT NOT NULL,
        identity_id TEXT NOT NULL REFERENCES identities(id),
        address TEXT NOT NULL,
        code_hash TEXT NOT NULL,
        token_hash TEXT NOT NULL,
        csrf_token TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        used_at BIGINT
      )`,
      `CREATE INDEX mail_codes_identity_idx ON mail_codes(identity_id, purpose, state)`,
    ],
  },
  {
    // Webhooks (docs/webhooks.md): where events are posted and with which secret, sealed with
    // the encryption key like TOTP secrets. Their deliveries are outbox rows of kind
    // `webhook` whose target is the webhook's id.
    id: '0012_webhooks',
    statements: [
      `CREATE TABLE webhooks (
        id TEXT PRIMARY KEY,
        url TEXT NOT NULL,
        events TEXT NOT NULL,
        sealed_secret TEXT NOT NULL,
        created_at BIGINT NOT NULL
      )`,
    ],
  },
  {
    // Self-service sign-up (docs/registration.md) runs on the login flows' table: the same
    // ids, CSRF tokens, expiry, attempt cap, sweep and WebAuthn challenge binding. `kind`
    // keeps the two apart, so a registration flow never serves a sign-in and back; every
    // row written before is a login flow.
    id: '0013_flow_kind',
    statements: [`ALTER TABLE flows ADD COLUMN kind TEXT NOT NULL DEFAULT 'login'`],
  },
  {
    // Account recovery flows (docs/recovery.md): the page's CSRF token, the address typed
    // and the mailed code it waits for. `mail_code_id` is null while no address was given,
    // and stays null when the address is no identity's verified one: the flow looks and
    // answers the same either way, and no code can ever complete it.
    id: '0014_recovery_flows',
    statements: [
      `CREATE TABLE recovery_flows (
        id TEXT PRIMARY KEY,
        csrf_token TEXT NOT NULL,
        return_to TEXT,
        state TEXT NOT NULL,
        address TEXT,
        mail_code_id TEXT,
        attempts INTEGER NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
      )`,
      `CREATE INDEX recovery_flows_expires_idx ON recovery_flows(expires_at)`,
    ],
  },
  {
    // Upstream providers (docs/providers.md): authorization requests in flight, so that a
    // provider's callback works on any instance. No foreign keys: a row lives minutes, is
    // taken by its callback (one conditional DELETE) or swept once expired.
    id: '0016_provider_authorizations',
    statements: [
      `CREATE TABLE provider_authorizations (
        state_hash TEXT PRIMARY KEY,
        provider_id TEXT NOT NULL,
        purpose TEXT NOT NULL,
        flow_id TEXT,
        identity_id TEXT,
        browser_hash TEXT NOT NULL,
        redirect_uri TEXT NOT NULL,
        sealed TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
      )`,
      `CREATE INDEX provider_authorizations_expiry_idx ON provider_authorizations(expires_at)`,
    ],
  },
  {
    // The console's overview (docs/admin.md) at a million identities and millions of
    // sessions: "live sessions" counts from an index holding only the unrevoked ones, and
    // covering the query (`revoked_at` in it too: SQLite's planner does not count a partial
    // index's condition as covered, and with statistics it scanned the table), 7x faster at
    // 5M live sessions on SQLite; "new identities per day" reads only the last 30 days'
    // identities instead of every one. Each costs an index entry per sign-in or sign-up;
    // neither is on the session check's path.
    id: '0017_overview_indexes',
    statements: [
      `CREATE INDEX sessions_live_idx ON sessions(expires_at, revoked_at) WHERE revoked_at IS NULL`,
      `CREATE INDEX identities_created_idx ON identities(created_at)`,
    ],
  },
  {
    // The overview's sign-ins per hour read the week's audit rows by time, and most of a
    // busy service's audit rows are not sign-ins: every call with a service token leaves
    // one (a backend verifying a session per request writes millions a week). This index
    // holds the sign-ins only, so that count reads them and nothing else; the other audit
    // rows cost it nothing, not even an index entry. queries/admin.ts's SIGN_IN_ACTIONS
    // is this list. Building it reads the whole log once, holding the log's writes (and so
    // the audited mutations) meanwhile: 0.12 s for a million rows on PostgreSQL here.
    id: '0018_audit_sign_ins_index',
    statements: [
      `CREATE INDEX audit_log_sign_ins_idx ON audit_log(at)
        WHERE action IN ('login', 'authenticate_password', 'authenticate_link')`,
    ],
  },
  {
    // The OpenID provider's lookups by `uid` (its sessions and interactions) and by
    // `user_code` (device codes) read only rows that have one, yet every code, access token
    // and refresh token, which have neither, left a NULL entry in both indexes: two more
    // index pages written per token. Partial indexes hold only the rows with a value, and a
    // lookup `uid = ?` implies `uid IS NOT NULL`, so both databases still use them. A token
    // request's write (a refresh: the old token spent, a new refresh and access token) wrote
    // 17% less WAL on SQLite (50.7 -> 41.9 KB) for 7% less CPU (a loop of 3,000 over 20,000
    // rows, docs/oidc.md "Storage").
    id: '0019_oidc_partial_lookup_indexes',
    statements: [
      `DROP INDEX oidc_models_uid_idx`,
      `CREATE INDEX oidc_models_uid_idx ON oidc_models(uid) WHERE uid IS NOT NULL`,
      `DROP INDEX oidc_models_user_code_idx`,
      `CREATE INDEX oidc_models_user_code_idx ON oidc_models(user_code) WHERE user_code IS NOT NULL`,
    ],
  },
];
