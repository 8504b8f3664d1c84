// Renders `rho --help` at build time into dist/help-<width>.txt for several terminal widths.
// `bin.js` prints the widest one that fits the terminal (100 columns when stdout is not a
// terminal), so the help answers at any width without loading yargs, whose width measurements
// alone cost more than Node's own start-up.
import { writeFileSync } from 'node:fs';

const { renderHelp } = await import(new URL('../dist/main.js', import.meta.url).href);
for (const width of [40, 60, 80, 100]) {
  writeFileSync(new URL(`../dist/help-${width}.txt`, import.meta.url), await renderHelp(width));
}
