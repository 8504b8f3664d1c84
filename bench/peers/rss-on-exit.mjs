// Loaded with `node --import` into every bench/peers contestant process (the rho CLI included):
// at exit, writes the process's peak resident set size (KiB) to the file named by
// RHO_BENCH_RSS_FILE, so the parent can compare peaks across separate processes.
import { writeFileSync } from 'node:fs';

const file = process.env.RHO_BENCH_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS)));
