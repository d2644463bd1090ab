import { userInfo } from 'node:os';
import { loadConfig } from '../config.js';
import type { Actor } from '../domain/audit/audit-log.js';
import type { IdentityDeps } from '../domain/identities/identity-service.js';
import type { NoticeSettings } from '../domain/notices/notices.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { Config } from '../config.js';
import type { AppDeps } from '../http/deps.js';
import type { StoreHandle } from '../storage/store.js';

/** What the commands use of the services the server also builds. */
export type CliDeps = IdentityDeps & {
  store: StoreHandle;
  config: Config;
  secretBox: SecretBox;
  notices: NoticeSettings;
  webhooks: AppDeps['webhooks'];
  generateSigningKey: AppDeps['generateSigningKey'];
};

/** CLI actions are audited as service `cli`, with the operating-system user who ran them. */
export function cliActor(): Actor {
  let osUser = 'unknown';
  try {
    osUser = userInfo().username;
  } catch {
    // no passwd entry (some containers); keep "unknown"
  }
  return { service_name: 'cli', service_id: null, details: { os_user: osUser } };
}

/**
 * Opens the same store the server uses, migrated (unless `migrate` is false: the `migrate`
 * command reports what it applied itself), runs `work`, and closes it.
 */
export async function withServices<T>(
  work: (deps: CliDeps) => Promise<T>,
  { migrate = true }: { migrate?: boolean } = {},
): Promise<T> {
  // Loaded on use: `--help`, `--version` and a refused command never load the storage.
  const { buildServices, consoleLog } = await import('../app.js');
  const services = await buildServices(loadConfig(), consoleLog);
  try {
    if (migrate) await services.deps.store.migrate();
    return await work(services.deps);
  } finally {
    await services.close();
  }
}
