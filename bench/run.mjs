// `pnpm bench [name...]`: runs the benchmarks under bench/ (all of them by default), one process
// each, so one benchmark's memory does not disturb another's measurements. Options (`--quick`)
// are passed on to every benchmark; those that know them run shorter.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter((name) => name.endsWith('.mjs') && name !== 'run.mjs')
  .map((name) => name.slice(0, -4))
  .sort();
const flags = process.argv.slice(2).filter((arg) => arg.startsWith('--'));
const requested = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const unknown = requested.filter((name) => !available.includes(name));
if (unknown.length > 0) {
  console.error(`Unknown benchmark(s): ${unknown.join(', ')}. Available: ${available.join(', ')}`);
  process.exit(2);
}
let failed = 0;
for (const name of requested.length > 0 ? requested : available) {
  console.log(`\n=== bench/${name} ===`);
  const result = spawnSync(process.execPath, ['--expose-gc', join(here, `${name}.mjs`), ...flags], {
    stdio: 'inherit',
  });
  if (result.status !== 0) failed += 1;
}
process.exit(failed === 0 ? 0 : 1);
