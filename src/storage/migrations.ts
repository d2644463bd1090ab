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
];
