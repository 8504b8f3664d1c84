import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SessionStore } from '@rho/core';
import { updateSessionMeta } from '@rho/core/internal';
import { createDirectorySource } from '@rho/monitor';
import { CheckpointStore, discardWorkspace } from '@rho/workspace';
import { afterEach, describe, expect, it } from 'vitest';
import { temporarySessions } from '../test/support.js';
import { finish, isolatedSession, repository, write } from '../test/workspaces.js';
import { startDashboard } from './dashboard-server.js';
import type { DashboardServer } from './dashboard-server.js';
import type { DashboardSource } from './dashboard-source.js';
import { createFileSource } from './file-source.js';
import type { SessionChanges } from './internal/session-changes.js';
import { createDashboardSource } from './source-dashboard.js';

let server: DashboardServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(source: DashboardSource): Promise<DashboardServer> {
  server = await startDashboard({ source });
  return server;
}

async function changes(
  id: string,
  token = server!.token,
): Promise<{ status: number; json: SessionChanges & { error?: string } }> {
  const response = await fetch(`${server!.origin}/api/sessions/${id}/changes`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  return {
    status: response.status,
    json: (await response.json().catch(() => ({}))) as SessionChanges & { error?: string },
  };
}

describe('GET /api/sessions/:id/changes', () => {
  it("answers an isolated workspace's files, totals and patch, and the listing carries meta.json's totals", async () => {
    const repo = repository({
      'a.txt': 'one\ntwo\nthree\n',
      'b.txt': 'gone soon\n',
      'logo.bin': Buffer.from([0, 1, 2, 3]),
    });
    const sessions = temporarySessions();
    const { id, directory, record } = await isolatedSession(sessions, repo);
    write(record.path, 'a.txt', 'one\n2\nthree\nfour\n');
    rmSync(join(record.path, 'b.txt'));
    write(record.path, 'src/new.ts', 'export const x = 1;\n');
    write(record.path, 'logo.bin', Buffer.from([0, 9, 8, 7, 6, 0, 255]));
    await finish(directory, record);
    await start(createFileSource(sessions));

    const answer = await changes(id);
    expect(answer.status).toBe(200);
    expect(answer.json.workspace).toEqual({
      mode: 'isolated',
      kind: 'git-worktree',
      branch: `rho/${id}`,
      state: 'active',
      original: record.original,
    });
    expect(answer.json.stats).toEqual({ files: 4, additions: 3, deletions: 2 });
    expect(answer.json.files).toEqual([
      { path: 'a.txt', status: 'modified', additions: 2, deletions: 1, binary: false },
      { path: 'b.txt', status: 'deleted', additions: 0, deletions: 1, binary: false },
      { path: 'logo.bin', status: 'modified', additions: 0, deletions: 0, binary: true },
      { path: 'src/new.ts', status: 'added', additions: 1, deletions: 0, binary: false },
    ]);
    const { patch } = answer.json;
    expect(patch).toContain('diff --git a/a.txt b/a.txt\n');
    expect(patch).toContain('-two\n+2\n three\n+four\n');
    expect(patch).toContain('+++ b/src/new.ts\n@@ -0,0 +1 @@\n+export const x = 1;\n');
    // Binary contents are named, not sent.
    expect(patch).not.toContain('GIT binary patch');
    expect(patch).toContain('diff --git a/logo.bin b/logo.bin\n');
    expect(patch).toContain('Binary file: its contents are not shown here.');
    expect(answer.json.truncated).toBe(false);
    expect(answer.json.note).toBeUndefined();
    // The user's files are untouched.
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('one\ntwo\nthree\n');

    const listing = (await (
      await fetch(`${server!.origin}/api/sessions`, { headers: { Authorization: `Bearer ${server!.token}` } })
    ).json()) as { rows: { id: string; changes?: unknown }[] };
    expect(listing.rows.find((row) => row.id === id)?.changes).toEqual({ files: 4, additions: 3, deletions: 2 });

    expect((await changes(id, 'wrong')).status).toBe(401);
    const unknown = await changes('nosuchsession');
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toBe('No session nosuchsession.');
  }, 60_000);

  it('cuts a patch over 2 MiB on a line, saying how large it is and that rho diff shows it whole', async () => {
    const repo = repository({ 'README.md': 'hello\n' });
    const sessions = temporarySessions();
    const { id, directory, record } = await isolatedSession(sessions, repo);
    const line = `${'x'.repeat(99)}\n`;
    write(record.path, 'big.txt', line.repeat(30_000));
    await finish(directory, record);
    await start(createFileSource(sessions));
    const { json } = await changes(id);
    expect(json.stats).toEqual({ files: 1, additions: 30_000, deletions: 0 });
    expect(json.truncated).toBe(true);
    expect(json.patchBytes).toBeGreaterThan(3_000_000);
    expect(Buffer.byteLength(json.patch)).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(Buffer.byteLength(json.patch)).toBeGreaterThan(2 * 1024 * 1024 - 200);
    expect(json.patch.endsWith(`+${line}`)).toBe(true);
    expect(json.note).toBe(
      `The patch is 2.9 MiB: the dashboard shows its first 2.0 MiB. rho diff ${id} shows it whole.`,
    );
  }, 60_000);

  it("answers an in-place run's diff from its first checkpoint to its last", async () => {
    const repo = repository({ 'a.txt': 'one\n', 'keep.txt': 'same\n' });
    const sessions = temporarySessions();
    const { id, directory } = new SessionStore(sessions).create({ model: 'gpt-4o-mini' });
    updateSessionMeta(directory, { working_dir: repo, status: 'completed' });
    const store = CheckpointStore.open({ sessionDir: directory, workingDir: repo });
    await store.take(0);
    write(repo, 'a.txt', 'one\ntwo\n');
    await store.take(1);
    write(repo, 'notes/plan.md', '# plan\n- a\n');
    await store.take(2);
    await start(createFileSource(sessions));
    const { status, json } = await changes(id);
    expect(status).toBe(200);
    expect(json.workspace).toBeNull();
    expect(json.checkpoints).toMatchObject({ count: 3, from: { turn: 0 }, to: { turn: 2 } });
    expect(json.stats).toEqual({ files: 2, additions: 3, deletions: 0 });
    expect(json.files.map((file) => [file.path, file.status])).toEqual([
      ['a.txt', 'modified'],
      ['notes/plan.md', 'added'],
    ]);
    expect(json.patch).toContain('diff --git a/a.txt b/a.txt\n');
    expect(json.patch).toContain(' one\n+two\n');
    expect(json.patch).toContain('+# plan\n+- a\n');
  }, 60_000);

  it('says why there is no diff: in place without checkpoints, or a workspace discarded (its last totals kept)', async () => {
    const repo = repository({ 'a.txt': 'one\n' });
    const sessions = temporarySessions();
    const plain = new SessionStore(sessions).create({ model: 'gpt-4o-mini' });
    const { id, directory, record } = await isolatedSession(sessions, repo);
    write(record.path, 'a.txt', 'unos\n');
    await finish(directory, record);
    await discardWorkspace(record, directory);
    await start(createFileSource(sessions));

    const none = await changes(plain.id);
    expect(none.status).toBe(200);
    expect(none.json).toMatchObject({ workspace: null, stats: null, files: [], patch: '' });
    expect(none.json.note).toContain('ran in place without checkpoints');
    const discarded = await changes(id);
    expect(discarded.json.workspace?.state).toBe('discarded');
    expect(discarded.json.stats).toEqual({ files: 1, additions: 1, deletions: 1 });
    expect(discarded.json.patch).toBe('');
    expect(discarded.json.note).toContain(`Cannot diff the workspace of session ${id}: it was discarded`);
  }, 60_000);

  it('answers 501 for a source without the files of its sessions', async () => {
    const repo = repository({ 'a.txt': 'one\n' });
    const sessions = temporarySessions();
    const { id, directory, record } = await isolatedSession(sessions, repo);
    await finish(directory, record);
    await start(createDashboardSource(createDirectorySource(sessions)));
    const answer = await changes(id);
    expect(answer.status).toBe(501);
    expect(answer.json.error).toContain(`has no local files of session ${id}: see its changes with rho diff ${id}`);
    expect((await changes('nosuchsession')).status).toBe(404);
  }, 60_000);
});

describe('loading @rho/workspace', () => {
  const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));
  // An ES module leaves no trace in require.cache: a resolve hook records what is asked for.
  const script = (sessions: string, id: string) => `
import { registerHooks } from 'node:module';
const asked = [];
registerHooks({ resolve(specifier, context, next) { if (specifier.startsWith('@rho/workspace')) asked.push(specifier); return next(specifier, context); } });
const { startDashboard, createFileSource } = await import(${JSON.stringify(pathToFileURL(dist).href)});
const server = await startDashboard({ source: createFileSource(${JSON.stringify(sessions)}) });
const get = (path) => fetch(server.origin + path, { headers: { Authorization: 'Bearer ' + server.token } });
await (await get('/api/sessions')).json();
await (await get('/api/sessions/${id}')).json();
const beforeChanges = asked.length;
const changes = await (await get('/api/sessions/${id}/changes')).json();
await server.close();
process.stdout.write(JSON.stringify({ beforeChanges, afterChanges: asked.length, files: changes.stats.files }));
`;

  it.runIf(existsSync(dist))(
    "happens when a session's changes are asked for, not when the dashboard starts",
    async () => {
      const repo = repository({ 'a.txt': 'one\n' });
      const sessions = temporarySessions();
      const { id, directory, record } = await isolatedSession(sessions, repo);
      write(record.path, 'a.txt', 'one\ntwo\n');
      await finish(directory, record);
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', script(sessions, id)], {
        encoding: 'utf8',
      });
      expect(child.status, child.stderr).toBe(0);
      expect(JSON.parse(child.stdout)).toEqual({ beforeChanges: 0, afterChanges: 1, files: 1 });
    },
    60_000,
  );
});
