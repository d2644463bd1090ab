import { createRequire } from 'node:module';
import type pg from 'pg';

let loaded: typeof pg | undefined;

/**
 * The pg driver, loaded when a PostgreSQL store first needs it rather than with the
 * storage layer: a SQLite deployment's CLI commands and `serve` never load it. Loading pg
 * touches `Response` (its Cloudflare check), which loads Node's fetch too: together about
 * 20 ms of CPU at every start.
 */
export function pgDriver(): typeof pg {
  if (loaded === undefined) {
    loaded = createRequire(import.meta.url)('pg') as typeof pg;
    // BIGINT columns hold epoch milliseconds, well inside Number's exact range.
    loaded.types.setTypeParser(loaded.types.builtins.INT8, (value) => Number(value));
  }
  return loaded;
}
