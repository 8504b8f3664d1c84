/**
 * docs/settings.md holds the reference of every settings section between its markers: the page
 * and the sections cannot drift apart (`pnpm settings:docs` rewrites it after a change).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { settingsReferenceText } from '../src/settings.js';

const page = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..', 'docs', 'settings.md');

describe('docs/settings.md', () => {
  it('is the reference of every settings section (run pnpm settings:docs after changing a section)', async () => {
    const text = readFileSync(page, 'utf8');
    const begin = '<!-- settings reference: begin (pnpm settings:docs writes it) -->';
    const end = '<!-- settings reference: end -->';
    expect(text).toContain(begin);
    expect(text).toContain(end);
    const shown = text.slice(text.indexOf(begin) + begin.length, text.indexOf(end));
    expect(shown.trim()).toBe((await settingsReferenceText()).trim());
  });
});
