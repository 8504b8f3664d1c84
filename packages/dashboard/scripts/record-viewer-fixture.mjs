// Records the trace viewer's test session with the real rho CLI (apps/cli, built) against rho's
// loopback OpenAI-compatible server: a parent session and its delegate child, with a SQL result
// (the Chinook SQLite database vendored by @rho/tools-db), a call the readonly profile refuses, an
// automatic compaction, and a directive delivered on a resumed run. The sessions are written to
// test/fixtures/viewer-sessions/ with machine paths replaced by /home/user/project.
//
//   pnpm build && node packages/dashboard/scripts/record-viewer-fixture.mjs
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLoopbackServer } from '@rho/core/testing';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const bin = join(root, 'apps', 'cli', 'dist', 'bin.js');
const out = join(here, '..', 'test', 'fixtures', 'viewer-sessions');
const scratch = mkdtempSync(join(tmpdir(), 'rho-viewer-fixture-'));
const home = join(scratch, 'home');
const work = join(scratch, 'project');
mkdirSync(work, { recursive: true });
cpSync(
  join(root, 'packages', 'tools-db', 'test', 'fixtures', 'chinook', 'Chinook_Sqlite.sqlite'),
  join(work, 'chinook.sqlite'),
);
writeFileSync(join(work, 'databases.yaml'), 'databases:\n  music:\n    type: sqlite\n    path: ./chinook.sqlite\n');
writeFileSync(join(work, 'notes.txt'), 'The release is blocked on the invoice report.\nOwner: Dana.\n');

const server = await startLoopbackServer({
  props: { default_generation_settings: { n_ctx: 4000 } },
  steps: [
    // Run 1, turn 1: a query and a refused command.
    {
      type: 'response',
      text: 'Looking at the artists first.',
      toolCalls: [
        {
          id: 'call_sql',
          name: 'sqlite',
          arguments: JSON.stringify({
            database: 'music',
            operation: 'query',
            sql: 'SELECT ArtistId, Name FROM Artist ORDER BY ArtistId LIMIT 5',
          }),
        },
        { id: 'call_rm', name: 'bash', arguments: JSON.stringify({ command: 'rm -rf build && echo cleaned' }) },
        { id: 'call_grep', name: 'bash', arguments: JSON.stringify({ command: 'grep -n Owner notes.txt' }) },
        { id: 'call_grep_none', name: 'bash', arguments: JSON.stringify({ command: 'grep -n Nobody notes.txt' }) },
      ],
      usage: { prompt_tokens: 3500, completion_tokens: 40 },
    },
    // The context is over the threshold: the automatic compaction's summarising call.
    {
      type: 'response',
      text: 'Summary: the user wants the first artists; AC/DC and Accept lead the list; removing build/ was refused.',
      usage: { prompt_tokens: 3600, completion_tokens: 30 },
    },
    // Turn 2: delegate the notes to a child agent.
    {
      type: 'response',
      toolCalls: [
        {
          id: 'call_child',
          name: 'delegate',
          arguments: JSON.stringify({ instruction: 'Read notes.txt and say who owns the release.' }),
        },
      ],
      usage: { prompt_tokens: 400, completion_tokens: 20 },
    },
    // The child: reads the file, answers.
    {
      type: 'response',
      toolCalls: [{ id: 'call_read', name: 'read', arguments: JSON.stringify({ path: 'notes.txt' }) }],
      usage: { prompt_tokens: 300, completion_tokens: 12 },
    },
    {
      type: 'response',
      text: 'Dana owns the release; it is blocked on the invoice report.',
      usage: { prompt_tokens: 360, completion_tokens: 14 },
    },
    // Turn 3: the parent's answer.
    {
      type: 'response',
      text: 'The first artists are AC/DC, Accept, Aerosmith, Alanis Morissette and Alice In Chains. Dana owns the release.',
      usage: { prompt_tokens: 520, completion_tokens: 30 },
    },
    // Run 2 (resumed, with the directive): one more query, then the answer.
    {
      type: 'response',
      toolCalls: [
        {
          id: 'call_albums',
          name: 'sqlite',
          arguments: JSON.stringify({
            database: 'music',
            operation: 'query',
            sql: 'SELECT COUNT(*) AS albums FROM Album',
          }),
        },
      ],
      usage: { prompt_tokens: 640, completion_tokens: 18 },
    },
    { type: 'response', text: 'There are 347 albums.', usage: { prompt_tokens: 700, completion_tokens: 8 } },
    // A second session, under the developer profile: a write and an edit.
    {
      type: 'response',
      toolCalls: [
        {
          id: 'call_write',
          name: 'write',
          arguments: JSON.stringify({ path: 'owners.md', content: '# Owners\n\nRelease: Dana\n' }),
        },
      ],
      usage: { prompt_tokens: 300, completion_tokens: 20 },
    },
    {
      type: 'response',
      toolCalls: [
        {
          id: 'call_edit',
          name: 'edit',
          arguments: JSON.stringify({
            path: 'owners.md',
            old_string: 'Release: Dana',
            new_string: 'Release: Dana (backup: Lee)',
          }),
        },
      ],
      usage: { prompt_tokens: 340, completion_tokens: 20 },
    },
    {
      type: 'response',
      text: 'owners.md lists Dana, with Lee as backup.',
      usage: { prompt_tokens: 380, completion_tokens: 10 },
    },
  ],
});

// Not spawnSync: the loopback server answers from this process's event loop.
function rho(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: work,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, RHO_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    const answered = new Set();
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (process.env.RHO_FIXTURE_DEBUG) process.stderr.write(chunk);
      // A call waiting for approval is answered from another terminal, as a person would: the
      // command that removes files is denied, the rest approved.
      for (const [, call, prefix] of stderr.matchAll(
        /\(call (\w+)\)\n[^\n]*\n\s*answer from any terminal: rho approve (\w+)/g,
      )) {
        if (answered.has(call)) continue;
        answered.add(call);
        const answer =
          call === 'call_rm' ? ['deny', prefix, '--reason', 'Nothing is removed in this review.'] : ['approve', prefix];
        rho(answer).catch(reject);
      }
    });
    child.stdout.resume();
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`rho ${args.join(' ')} exited ${code}:\n${stderr}`)),
    );
  });
}

try {
  const common = [
    '--base-url',
    server.url,
    '--model',
    'loopback-model',
    '--profile',
    'readonly',
    '--db-config',
    'databases.yaml',
  ];
  await rho([...common, 'List the first five artists, clean the build folder, and find who owns the release.']);
  const sessions = join(home, 'sessions');
  const parent = readdirSync(sessions).find(
    (id) => JSON.parse(readFileSync(join(sessions, id, 'meta.json'), 'utf8')).parent_id == null,
  );
  await rho(['directive', parent, 'Also count the albums.']);
  await rho([...common, '--resume', parent, 'Go on.']);
  await rho([
    '--base-url',
    server.url,
    '--model',
    'loopback-model',
    '--profile',
    'developer',
    '-y',
    'Write down the owners.',
  ]);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  for (const id of readdirSync(sessions)) {
    mkdirSync(join(out, id));
    for (const file of ['meta.json', 'trace.jsonl']) {
      const text = readFileSync(join(sessions, id, file), 'utf8')
        .replaceAll(work, '/home/user/project')
        .replaceAll(home, '/home/user/.config/rho')
        .replaceAll(`${userInfo().username}@${hostname()}`, 'dana@review-host')
        .replaceAll(JSON.stringify(hostname()), '"review-host"');
      writeFileSync(join(out, id, file), text);
    }
  }
  console.log(`recorded ${readdirSync(out).length} sessions into ${out}`);
} finally {
  await server.close();
  rmSync(scratch, { recursive: true, force: true });
}
