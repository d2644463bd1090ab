// Loaded with `node --import ./test/helpers/record-modules.mjs` (after tsx): appends the URL
// of every module the process loads, one per line, to the file in TESSERA_MODULE_LOG.
import { register } from 'node:module';
import process from 'node:process';

register('./record-modules-hooks.mjs', import.meta.url, {
  data: { log: process.env.TESSERA_MODULE_LOG },
});
