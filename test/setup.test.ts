/**
 * The set-up a newcomer runs stays quiet and true: every turbo run of the root scripts has
 * turbo's telemetry off (the repository's own configuration, not each user's machine), and the
 * README's first block lists the system packages before the set-up line that needs them.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('the set-up', () => {
  it('runs turbo with its telemetry off in every root script', () => {
    const scripts = (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { scripts: Record<string, string> })
      .scripts;
    const turbo = Object.entries(scripts).filter(([, command]) => /\bturbo\b/.test(command));
    expect(turbo.length).toBeGreaterThan(0);
    for (const [name, command] of turbo)
      expect(command, `script ${name}`).toMatch(/^TURBO_TELEMETRY_DISABLED=1 turbo /);
  });

  it("lists the system packages in the README's first block, before the set-up line", () => {
    const readme = readFileSync(`${root}README.md`, 'utf8');
    const block = /```bash\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const apt = block.indexOf('apt-get install');
    const setup = block.indexOf('. scripts/use-node.sh');
    expect(apt).toBeGreaterThanOrEqual(0);
    expect(apt).toBeLessThan(setup);
    for (const name of ['bubblewrap', 'tmux', 'ripgrep', 'chromium']) expect(block).toContain(name);
  });
});
