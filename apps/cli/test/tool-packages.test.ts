import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bin, runRho } from './support/run-rho.js';

/** The example third-party package of this repository (built by `pnpm build`). */
const examplePackage = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'examples', 'tool-package');

interface SentRequest {
  messages: { role: string; content: string | null }[];
  tools?: { function: { name: string } }[];
}

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

beforeAll(() => {
  if (!existsSync(join(examplePackage, 'dist', 'index.js')))
    throw new Error('examples/tool-package is not built: run pnpm build (pnpm test does) first.');
});

/** A project the way a user has one: the example package installed in its node_modules, a README to count. */
function project(): { home: string; work: string } {
  const root = mkdtempSync(join(tmpdir(), 'rho-toolpkg-'));
  const work = join(root, 'project');
  mkdirSync(join(work, 'node_modules'), { recursive: true });
  symlinkSync(examplePackage, join(work, 'node_modules', 'rho-example-word-count'), 'dir');
  writeFileSync(join(work, 'README.md'), 'one two three\nfour\n');
  return { home: join(root, 'home'), work };
}

const hasTmux = spawnSync('tmux', ['-V']).status === 0;
if (!hasTmux && process.env.CI === 'true')
  throw new Error('tmux is required for the approval-on-a-terminal test in CI (apt-get install tmux).');

/** Waits until a tmux pane shows the pattern (the run happens in a real terminal there). */
async function waitForScreen(name: string, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const screen = execFileSync('tmux', ['capture-pane', '-p', '-S', '-200', '-t', name], { encoding: 'utf8' });
    if (pattern.test(screen)) return screen;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${pattern} on screen:\n${screen}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const sent = (index: number): SentRequest => server!.requests[index]!.body as SentRequest;
const toolNames = (index: number): string[] => (sent(index).tools ?? []).map((tool) => tool.function.name);
const lastMessage = (index: number) => sent(index).messages.at(-1)!;

const countReadme = () => [
  { type: 'response' as const, toolCalls: [{ name: 'word_count', arguments: '{"path": "README.md"}' }] },
  { type: 'response' as const, text: 'README.md has 4 words.' },
];

describe('tool packages in the CLI', () => {
  it('loads examples/tool-package by name from the agent config and runs its tool', async () => {
    const { home, work } = project();
    // The config lives in a subfolder: the name resolves upwards from there, as Node resolves it.
    mkdirSync(join(work, 'agents'));
    writeFileSync(
      join(work, 'agents', 'counter.yaml'),
      'profile: readonly\ntool_packages:\n  - rho-example-word-count\n',
    );
    server = await startLoopbackServer({ steps: countReadme() });
    const outcome = await runRho(
      [
        '--base-url',
        server.url,
        '--config',
        join(work, 'agents', 'counter.yaml'),
        '-p',
        'How many words are in README.md?',
      ],
      { env: { RHO_HOME: home }, cwd: work },
    );
    expect(outcome.stderr).not.toMatch(/Error/);
    // Headless without --auto-approve nobody can approve: what always needs approval under readonly is not offered.
    expect(outcome.stderr.match(/Warning: .*/g)).toBeNull();
    expect(outcome.stderr.match(/Note: .*/g)).toEqual([
      'Note: no terminal to approve on, so bash and delegate are not offered: every call of them needs approval under profile readonly. Pass -y to approve them, or --profile to choose another profile.',
    ]);
    expect(toolNames(0)).not.toContain('bash');
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain('README.md has 4 words.');
    expect(toolNames(0)).toContain('word_count');
    expect(toolNames(0)).toContain('read');
    expect(lastMessage(1)).toMatchObject({
      role: 'tool',
      content: `2 lines, 4 words, 19 bytes: ${join(work, 'README.md')}`,
    });
    // The session remembers its packages, so a resume has the same tools.
    const sessions = readdirSync(join(home, 'sessions'));
    expect(readFileSync(join(home, 'sessions', sessions[0]!, 'config.yaml'), 'utf8')).toMatch(
      /tool_packages:\n {2}- rho-example-word-count\n/,
    );
    await server.close();
    server = await startLoopbackServer({ steps: countReadme() });
    const resumed = await runRho(['--base-url', server.url, '-r', sessions[0]!, '-p', 'Count it again.'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(toolNames(0)).toContain('word_count');
    expect(lastMessage(1)).toMatchObject({
      role: 'tool',
      content: `2 lines, 4 words, 19 bytes: ${join(work, 'README.md')}`,
    });
  });

  it("passes package tools through the profile's approval: not offered where nobody can approve, asked on a terminal, run with --auto-approve", async () => {
    const { home, work } = project();
    const profile = join(work, 'ask.yaml');
    writeFileSync(
      profile,
      'profile: ask-for-word-count\ndescription: Asks before counting\napproval:\n  mode: granular\n  required_tools: [word_count]\n',
    );
    writeFileSync(join(work, 'agent.yaml'), `profile: ${profile}\ntool_packages: [rho-example-word-count]\n`);

    // Headless: every call of word_count needs approval and nobody can give it, so it is not offered.
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'I cannot count here.' }] });
    const headless = await runRho(['--base-url', server.url, '--config', 'agent.yaml', '-p', 'Count README.md'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(headless.code).toBe(0);
    expect(headless.stderr).toContain(
      'Note: no terminal to approve on, so word_count is not offered: every call of it needs approval under profile ask-for-word-count. Pass -y to approve it, or --profile to choose another profile.',
    );
    expect(toolNames(0)).not.toContain('word_count');
    expect(toolNames(0)).toContain('read');
    await server.close();

    // On a terminal the same run offers it and asks before each call; answering yes runs it.
    if (hasTmux) {
      server = await startLoopbackServer({ steps: countReadme() });
      const name = `rho-toolpkg-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
      const command = `cd '${work}' && env RHO_HOME='${home}' NO_COLOR=1 '${process.execPath}' '${bin}' --base-url '${server.url}' --config agent.yaml -p 'Count README.md'; echo "[exit $?]"; sleep 30`;
      execFileSync('tmux', ['new-session', '-d', '-s', name, '-x', '200', '-y', '50', command]);
      try {
        const screen = await waitForScreen(name, /Allow\?/);
        expect(screen).toMatch(/word_count[\s\S]*profile ask-for-word-count requires approval for word_count/);
        // One key answers: no Enter after y.
        execFileSync('tmux', ['send-keys', '-t', name, 'y']);
        await waitForScreen(name, /\[exit 0\]/);
      } finally {
        spawnSync('tmux', ['kill-session', '-t', name]);
      }
      expect(lastMessage(1)).toMatchObject({
        role: 'tool',
        content: `2 lines, 4 words, 19 bytes: ${join(work, 'README.md')}`,
      });
      await server.close();
    }

    server = await startLoopbackServer({ steps: countReadme() });
    const approved = await runRho(
      ['--base-url', server.url, '--config', 'agent.yaml', '--auto-approve', '-p', 'Count README.md'],
      { env: { RHO_HOME: home }, cwd: work },
    );
    expect(approved.code).toBe(0);
    expect(lastMessage(1)).toMatchObject({
      role: 'tool',
      content: `2 lines, 4 words, 19 bytes: ${join(work, 'README.md')}`,
    });
  });

  it('takes --tool-package paths, and denies a package tool not declared read-only by default', async () => {
    const { home, work } = project();
    // A second package, a plain module file: one tool without annotations, made by a factory.
    writeFileSync(
      join(work, 'stamp.mjs'),
      [
        'import { writeFileSync } from "node:fs";',
        'import { join } from "node:path";',
        'export function createTools({ profile, workingDir }) {',
        '  return [{',
        '    name: "stamp", description: `Writes STAMP (profile ${profile.name})`,',
        '    parameters: { type: "object", properties: {} },',
        '    async handle() { writeFileSync(join(workingDir, "STAMP"), "x"); return { success: true, content: "stamped" }; },',
        '  }];',
        '}',
        '',
      ].join('\n'),
    );
    const flags = ['--tool-package', './stamp.mjs', '--tool-package', examplePackage];

    // readonly: the tool is not offered at all (file_write: off), the read-only one is.
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'ok' }] });
    const readonly = await runRho(['--base-url', server.url, ...flags, '-p', 'stamp it'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(readonly.code).toBe(0);
    expect(readonly.stderr).toContain(
      'Warning: tool stamp (from tool package ./stamp.mjs) is not offered: it is not declared read-only (annotations.readOnly) and profile readonly allows no writes.',
    );
    expect(toolNames(0)).toContain('word_count');
    expect(toolNames(0)).not.toContain('stamp');
    await server.close();

    // developer: each call needs approval, so without an approver it is not offered and nothing is written.
    server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'stamp', arguments: '{}' }] },
        { type: 'response', text: 'refused' },
      ],
    });
    const developer = await runRho(['--base-url', server.url, '--profile', 'developer', ...flags, '-p', 'stamp it'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(developer.code).toBe(0);
    expect(developer.stderr).toContain(
      'Note: no terminal to approve on, so stamp is not offered: every call of it needs approval under profile developer.',
    );
    expect(toolNames(0)).not.toContain('stamp');
    expect(toolNames(0)).toContain('word_count');
    expect(lastMessage(1).content).toContain("unknown tool 'stamp'");
    expect(existsSync(join(work, 'STAMP'))).toBe(false);
    await server.close();

    // developer with --auto-approve: offered (made by its factory for this profile), asked for, and run.
    server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'stamp', arguments: '{}' }] },
        { type: 'response', text: 'done' },
      ],
    });
    const approved = await runRho(
      ['--base-url', server.url, '--profile', 'developer', '--auto-approve', ...flags, '-p', 'stamp it'],
      { env: { RHO_HOME: home }, cwd: work },
    );
    expect(approved.code).toBe(0);
    expect(sent(0).tools?.find((tool) => tool.function.name === 'stamp')).toMatchObject({
      function: { description: 'Writes STAMP (profile developer)' },
    });
    expect(lastMessage(1)).toMatchObject({ role: 'tool', content: 'stamped' });
    expect(existsSync(join(work, 'STAMP'))).toBe(true);
    rmSync(join(work, 'STAMP'));
    await server.close();

    // unrestricted (approval: none): it runs like any built-in tool would.
    server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'stamp', arguments: '{}' }] },
        { type: 'response', text: 'done' },
      ],
    });
    const unrestricted = await runRho(
      ['--base-url', server.url, '--profile', 'unrestricted', ...flags, '-p', 'stamp it'],
      { env: { RHO_HOME: home }, cwd: work },
    );
    expect(unrestricted.code).toBe(0);
    expect(lastMessage(1)).toMatchObject({ role: 'tool', content: 'stamped' });
    expect(existsSync(join(work, 'STAMP'))).toBe(true);
    await server.close();

    // Resuming with the same command again: the saved (absolute) paths and the flags' relative
    // ones name the same packages, loaded once.
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'again' }] });
    const resumed = await runRho(
      ['--base-url', server.url, '--profile', 'unrestricted', '-r', 'latest', ...flags, '-p', 'stamp it again'],
      { env: { RHO_HOME: home }, cwd: work },
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(toolNames(0).filter((name) => name === 'stamp')).toHaveLength(1);
  });

  it('says which package is missing or clashes, exit 2, before any model call', async () => {
    const { home, work } = project();
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'never' }] });
    const missing = await runRho(['--base-url', server.url, '--tool-package', 'rho-no-such-tools', '-p', 'x'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      'Tool package rho-no-such-tools (--tool-package) is not installed: no node_modules/rho-no-such-tools above',
    );
    writeFileSync(
      join(work, 'clash.mjs'),
      'export const read = { name: "read", description: "mine", parameters: { type: "object" }, annotations: { readOnly: true }, async handle() { return { success: true, content: "" }; } };\n',
    );
    const clash = await runRho(['--base-url', server.url, '--tool-package', './clash.mjs', '-p', 'x'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(clash.code).toBe(2);
    expect(clash.stderr).toContain('Tool package ./clash.mjs has a tool named read, which is already a built-in tool.');
    writeFileSync(join(work, 'empty.mjs'), 'export const answer = 42;\n');
    const empty = await runRho(['--base-url', server.url, '--tool-package', './empty.mjs', '-p', 'x'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('Tool package ./empty.mjs (--tool-package) exports no tools');
    expect(server.requests).toHaveLength(0);
  });

  it('names the file and line of a syntax error, also in a module the entry imports, in one line', async () => {
    const { home, work } = project();
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'never' }] });
    writeFileSync(join(work, 'flat.mjs'), 'export const a = {\n  b: 1 2\n};\n');
    const flat = await runRho(['--base-url', server.url, '--tool-package', './flat.mjs', '-p', 'x'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(flat.code).toBe(2);
    expect(flat.stderr).toBe(
      `rho: Tool package ./flat.mjs (--tool-package) failed to load: a syntax error in ${join(work, 'flat.mjs')}:2: Unexpected number\n`,
    );
    mkdirSync(join(work, 'tools', 'lib'), { recursive: true });
    writeFileSync(join(work, 'tools', 'index.mjs'), "export { tool } from './lib/tool.mjs';\n");
    writeFileSync(
      join(work, 'tools', 'lib', 'tool.mjs'),
      "import { defineTool } from '@rho/core';\n\nexport const tool = defineTool({ name: 'x',, });\n",
    );
    const nested = await runRho(['--base-url', server.url, '--tool-package', './tools/index.mjs', '-p', 'x'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(nested.code).toBe(2);
    expect(nested.stderr).toBe(
      `rho: Tool package ./tools/index.mjs (--tool-package) failed to load: a syntax error in ${join(work, 'tools', 'lib', 'tool.mjs')}:3: Unexpected token ','\n`,
    );
    expect(server.requests).toHaveLength(0);
  });
});

describe('agent config checks', () => {
  it('warns about unknown keys with a did-you-mean, and still runs', async () => {
    const { home, work } = project();
    writeFileSync(join(work, 'agent.yaml'), 'tools:\n  - rho-example-word-count\nmodle: gpt-4o\n');
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'ok' }] });
    const outcome = await runRho(['--base-url', server.url, '--config', 'agent.yaml', '-p', 'hi'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toContain(
      `Warning: ${join(work, 'agent.yaml')}:1: unknown key 'tools' is ignored (did you mean 'tool_packages'?).`,
    );
    expect(outcome.stderr).toContain("unknown key 'modle' is ignored (did you mean 'model'?).");
    expect(toolNames(0)).not.toContain('word_count');
  });

  it('stops with exit 2 on a backend it cannot provide instead of running the tools locally', async () => {
    const { home, work } = project();
    writeFileSync(join(work, 'agent.yaml'), 'backend: nowhere\n');
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'never' }] });
    const outcome = await runRho(['--base-url', server.url, '--config', 'agent.yaml', '-p', 'hi'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain(`Unknown backend 'nowhere' (${join(work, 'agent.yaml')}:1): choose one of local`);
    const fromEnvironment = await runRho(['--base-url', server.url, '-p', 'hi'], {
      env: { RHO_HOME: home, RHO_AGENT_BACKEND: 'nowhere' },
      cwd: work,
    });
    expect(fromEnvironment.code).toBe(2);
    expect(fromEnvironment.stderr).toContain("Unknown backend 'nowhere' (RHO_AGENT_BACKEND)");
    expect(server.requests).toHaveLength(0);
    expect(existsSync(join(home, 'sessions'))).toBe(false);
  });
});
