import type { AdminStore } from './admin/admin-store.js';
import type { AuditStore } from './audit/audit.js';
import type { IdentityStore } from './identities/identity-store.js';
import type { TransferStore } from './identity-transfer/transfer-store.js';
import type { LinkStore } from './links/link-store.js';
import type { MailCodeStore } from './mail-codes/mail-code-store.js';
import type { OidcStore } from './oidc/oidc-store.js';
import type { OutboxStore } from './outbox/outbox.js';
import type { FlowStore } from './login-flows/flow-store.js';
import type { PasskeyStore } from './passkeys/passkey-store.js';
import type { RateLimitStore } from './rate-limit/rate-limit-store.js';
import type { SecondFactorStore } from './second-factor/second-factor-store.js';
import type { ServiceTokenStore } from './service-tokens/service-token-store.js';
import type { SessionStore } from './sessions/session-store.js';
import type { LegacyTokenStore } from './tokens/legacy-token-store.js';
import type { WebhookStore } from './webhooks/webhook.js';
import type { ProviderAuthorizationStore } from './providers/authorization.js';
import type { RecoveryFlowStore } from './recovery/recovery-flow-store.js';

/**
 * Everything the domain persists: one interface composed of the modules' own.
 * Implemented by storage/ for SQLite and PostgreSQL.
 */
export interface Store
  extends
    IdentityStore,
    SessionStore,
    ServiceTokenStore,
    AuditStore,
    RateLimitStore,
    FlowStore,
    LinkStore,
    TransferStore,
    LegacyTokenStore,
    SecondFactorStore,
    PasskeyStore,
    OidcStore,
    OutboxStore,
    AdminStore,
    MailCodeStore,
    WebhookStore,
    ProviderAuthorizationStore,
    RecoveryFlowStore {
  /**
   * Runs `work` in one database transaction: everything it writes commits, or none of it.
   * Inside a transaction, calling this again joins the open one.
   */
  transaction<T>(work: (tx: Store) => Promise<T>): Promise<T>;
}
