/**
 * oidc-provider's own in-memory adapter and its store (deep imports: the package ships no
 * types for them). The floor gives the adapter a larger store than the library's default.
 */
declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  import type { Adapter } from 'oidc-provider';

  export default class MemoryAdapter implements Adapter {
    constructor(model: string, store: unknown, clockTolerance: number);
    upsert: Adapter['upsert'];
    find: Adapter['find'];
    findByUserCode: Adapter['findByUserCode'];
    findByUid: Adapter['findByUid'];
    consume: Adapter['consume'];
    destroy: Adapter['destroy'];
    revokeByGrantId: Adapter['revokeByGrantId'];
  }
}

declare module 'oidc-provider/lib/helpers/lru.js' {
  export default class LRU {
    constructor(options: { maxSize: number });
  }
}
