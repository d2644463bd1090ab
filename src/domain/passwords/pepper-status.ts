import type { Store } from '../store.js';
import type { PasswordHasher } from './password-hasher.js';

export type PepperRole = 'current' | 'previous' | 'missing';

export interface PepperCount {
  /** The pepper's id (never the pepper). */
  id: string;
  /** `missing`: named by stored hashes but not configured; those hashes verify no password. */
  role: PepperRole;
  /** Stored hashes made with it. */
  hashes: number;
  /** Of those, hashes written before hashes named their pepper, read as the oldest pepper's. */
  untagged: number;
}

export interface PepperStatus {
  current: string;
  /** The current pepper, the previous ones as configured, then any missing one. */
  peppers: PepperCount[];
  /** Imported hashes not yet replaced: they use no pepper. */
  imported: number;
  /** Identities without a password. */
  without_password: number;
}

const PAGE = 1000;

/**
 * How many stored hashes depend on each pepper (`tessera pepper status`): a previous pepper
 * with none left can be dropped. Reads every identity a page at a time.
 */
export async function pepperStatus(deps: {
  store: Pick<Store, 'exportPage'>;
  hasher: Pick<PasswordHasher, 'pepperOf' | 'peppers'>;
}): Promise<PepperStatus> {
  const { current, previous } = deps.hasher.peppers;
  const counts = new Map<string, PepperCount>();
  const add = (id: string, role: PepperRole) => {
    const count = { id, role, hashes: 0, untagged: 0 };
    counts.set(id, count);
    return count;
  };
  add(current, 'current');
  for (const id of previous) add(id, 'previous');
  const status: PepperStatus = { current, peppers: [], imported: 0, without_password: 0 };
  let afterId: string | null = null;
  for (;;) {
    const page = await deps.store.exportPage({ afterId, limit: PAGE });
    if (page.length === 0) break;
    for (const { password_hash: hash } of page) {
      const pepper = hash === null ? null : deps.hasher.pepperOf(hash);
      if (hash === null) status.without_password += 1;
      else if (pepper === null) status.imported += 1;
      else {
        const count = counts.get(pepper.id) ?? add(pepper.id, 'missing');
        count.hashes += 1;
        if (!pepper.tagged) count.untagged += 1;
      }
    }
    afterId = page[page.length - 1]!.id;
  }
  status.peppers = [...counts.values()];
  return status;
}
