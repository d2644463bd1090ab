/** Entry of the load-generator process: reads a LoadSpec file, prints one LoadResult line. */
import { readFileSync } from 'node:fs';
import { type LoadSpec, runLoad } from './lib/load.js';

const spec = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as LoadSpec;
const result = await runLoad(spec);
process.stdout.write(`${JSON.stringify(result)}\n`);
