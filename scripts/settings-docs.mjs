// `pnpm settings:docs`: writes the reference of every settings section (keys, files, environment
// variables, flags, defaults, precedence exceptions) into docs/settings.md between its markers,
// from the built CLI's list of sections (run `pnpm build` first). `--check` only compares, and
// exits 1 when the page is stale; apps/cli/test/settings-docs.test.ts does the same in the suite.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const page = join(root, 'docs', 'settings.md');
const BEGIN = '<!-- settings reference: begin (pnpm settings:docs writes it) -->';
const END = '<!-- settings reference: end -->';

const { settingsReferenceText } = await import(pathToFileURL(join(root, 'apps', 'cli', 'dist', 'settings.js')).href);
const reference = await settingsReferenceText();
const text = readFileSync(page, 'utf8');
const start = text.indexOf(BEGIN);
const end = text.indexOf(END);
if (start === -1 || end === -1) {
  process.stderr.write(`docs/settings.md has lost its markers (${BEGIN} ... ${END}): put them back.\n`);
  process.exit(2);
}
const updated = `${text.slice(0, start + BEGIN.length)}\n\n${reference}\n${text.slice(end)}`;
if (process.argv.includes('--check')) {
  if (updated !== text) {
    process.stderr.write('docs/settings.md is not the reference of the settings sections: run pnpm settings:docs.\n');
    process.exit(1);
  }
} else if (updated !== text) writeFileSync(page, updated);
