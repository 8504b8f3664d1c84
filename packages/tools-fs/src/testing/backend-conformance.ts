import { posix } from 'node:path';
import type { ExecutionBackend, Tool, ToolContext, ToolResult } from '@rho/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBashTool } from '../bash-tool.js';
import { createEditTool } from '../edit-tool.js';
import { createGlobTool } from '../glob-tool.js';
import { createGrepTool } from '../grep-tool.js';
import { createListTool } from '../list-tool.js';
import { createReadTool } from '../read-tool.js';
import type { WritePathCheck } from '../write-path-check.js';
import { createWriteTool } from '../write-tool.js';

/** A backend made for the conformance suite, and the directory the suite may use on it. */
export interface BackendUnderTest {
  /** The backend, ready to run tools. */
  backend: ExecutionBackend;
  /**
   * An existing, empty, writable directory on the backend, where every test makes a subdirectory
   * of its own. Absolute, as the backend's file system names it.
   */
  workingDir: string;
  /** Removes what the test made (the directory, the backend's resources); `backend.close()` is called before it. */
  cleanup?: () => Promise<void>;
}

/** Options of {@link runBackendConformance}. */
export interface BackendConformanceOptions {
  /** Per-test timeout in milliseconds (default 60 000; remote backends may need more). */
  testTimeoutMs?: number;
  /** Titles of tests to skip, for a backend that documents why it cannot do what they check. */
  skip?: readonly string[];
  /** Seconds between SIGTERM and SIGKILL when a command is stopped (default 0.5). */
  killGraceSeconds?: number;
}

const allowEveryPath: WritePathCheck = async (path) => ({ allowed: true, realPath: path });

/**
 * The conformance suite of the file and shell tools over an {@link ExecutionBackend}: `read`,
 * `write`, `edit`, `grep`, `glob`, `list` and `bash` behave the same whatever runs them (the
 * model sees one behaviour), and so do the backend calls under them (error codes, exclusive
 * create, atomic replace, pipes between processes, process-group kill).
 *
 * Call it at the top level of a vitest test file: it declares a `describe` block named after the
 * backend. `makeBackend` runs once, before the tests; every test works in a fresh subdirectory of
 * `workingDir`, which it sets up through the backend itself (never through this machine's file
 * system), so a remote backend is tested the same way. Needs `bash`, `rg` (ripgrep), `sleep`,
 * `seq`, `ln` and `kill` on the backend.
 *
 * ```ts
 * import { runBackendConformance } from '@rho/tools-fs/testing';
 * runBackendConformance('sandbox', async () => {
 *   const workingDir = await mkdtemp(join(tmpdir(), 'x-'));
 *   return { backend: await createSandboxBackend({ workingDir }), workingDir, cleanup: () => rm(workingDir, { recursive: true }) };
 * });
 * ```
 */
export function runBackendConformance(
  name: string,
  makeBackend: () => Promise<BackendUnderTest>,
  options: BackendConformanceOptions = {},
): void {
  const timeout = options.testTimeoutMs ?? 60_000;
  const skipped = new Set(options.skip ?? []);
  const grace = options.killGraceSeconds ?? 0.5;
  let made: BackendUnderTest | undefined;
  let counter = 0;

  const under = (): BackendUnderTest => {
    if (made === undefined) throw new Error(`runBackendConformance(${name}): makeBackend did not finish`);
    return made;
  };
  /** A fresh directory of this test on the backend, and a context for calls made in it. */
  const fresh = async (
    signal?: AbortSignal,
  ): Promise<{ dir: string; context: ToolContext; backend: ExecutionBackend }> => {
    const { backend, workingDir } = under();
    counter += 1;
    const dir = posix.join(workingDir, `case-${counter}`);
    await backend.mkdir(dir, { recursive: true });
    const context: ToolContext = {
      signal: signal ?? new AbortController().signal,
      sessionId: 'conformance',
      workingDir: dir,
      backend,
    };
    return { dir, context, backend };
  };
  const put = (backend: ExecutionBackend, path: string, text: string | Uint8Array) =>
    backend.writeFileAtomic(path, typeof text === 'string' ? Buffer.from(text, 'utf8') : text);
  const text = async (backend: ExecutionBackend, path: string) =>
    Buffer.from(await backend.readFile(path, { maxBytes: 1 << 20 })).toString('utf8');
  const test = (title: string, body: () => Promise<void>) =>
    skipped.has(title) ? it.skip(title, body) : it(title, body, timeout);
  const bash = createBashTool({ mode: 'unrestricted', killGraceSeconds: grace });
  const bashOutput = (result: ToolResult) =>
    (JSON.parse(result.content) as { output: string; metadata: { exit_code: number } }).output;

  describe(`execution backend conformance: ${name}`, () => {
    beforeAll(async () => {
      made = await makeBackend();
    }, timeout * 2);
    afterAll(async () => {
      await made?.backend.close?.();
      await made?.cleanup?.();
    }, timeout);

    test('write creates files and parents; read numbers the lines', async () => {
      const { dir, context, backend } = await fresh();
      const write = createWriteTool({ mode: 'full', checkPath: allowEveryPath });
      const created = await call(write, { path: 'sub/deeper/a.txt', content: 'one\ntwo\nthree\n' }, context);
      expect(created).toMatchObject({ success: true, content: `Created ${dir}/sub/deeper/a.txt (14 bytes, 3 lines)` });
      const read = await call(createReadTool(), { path: 'sub/deeper/a.txt' }, context);
      expect(read).toMatchObject({ success: true, content: '     1  one\n     2  two\n     3  three' });
      const again = await call(write, { path: `${dir}/sub/deeper/a.txt`, content: 'replaced' }, context);
      expect(again).toMatchObject({ success: true, metadata: { overwrote: true } });
      expect(await text(backend, `${dir}/sub/deeper/a.txt`)).toBe('replaced');
    });

    test('create-only write never replaces a file', async () => {
      const { dir, context, backend } = await fresh();
      await put(backend, `${dir}/kept.txt`, 'original');
      const write = createWriteTool({ mode: 'create-only', checkPath: allowEveryPath });
      const result = await call(write, { path: 'kept.txt', content: 'new' }, context);
      expect(result.success).toBe(false);
      expect(result.content).toContain('File already exists');
      expect(await text(backend, `${dir}/kept.txt`)).toBe('original');
      await expect(backend.createExclusive(`${dir}/kept.txt`, Buffer.from('x'))).rejects.toMatchObject({
        code: 'EEXIST',
      });
    });

    test('edit replaces a unique string and refuses an ambiguous one', async () => {
      const { dir, context, backend } = await fresh();
      await put(backend, `${dir}/code.py`, 'def f():\n    return 1\n\ndef g():\n    return 1\n');
      const edit = createEditTool({ checkPath: allowEveryPath });
      const ambiguous = await call(edit, { path: 'code.py', old_string: 'return 1', new_string: 'return 2' }, context);
      expect(ambiguous.success).toBe(false);
      const done = await call(
        edit,
        { path: 'code.py', old_string: 'def g():\n    return 1', new_string: 'def g():\n    return 2' },
        context,
      );
      expect(done.success).toBe(true);
      expect(await text(backend, `${dir}/code.py`)).toBe('def f():\n    return 1\n\ndef g():\n    return 2\n');
    });

    test('read pages long files, refuses binary ones, and reports missing ones', async () => {
      const { dir, context, backend } = await fresh();
      await put(backend, `${dir}/long.txt`, Array.from({ length: 5000 }, (_, index) => `line ${index + 1}`).join('\n'));
      const read = createReadTool();
      const first = await call(read, { path: 'long.txt' }, context);
      expect(first.content.split('\n').at(-1)).toMatch(/^\[Showing lines 1-\d+ of 5000\]$/);
      const last = await call(read, { path: 'long.txt', start_line: -2 }, context);
      expect(last.content).toBe('  4999  line 4999\n  5000  line 5000\n\n[Showing lines 4999-5000 of 5000]');
      await put(backend, `${dir}/blob`, new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 0, 0, 3]));
      const binary = await call(read, { path: 'blob' }, context);
      expect(binary).toMatchObject({ success: false });
      expect(binary.content).toContain('Cannot read binary file');
      expect(binary.content).toContain('NUL bytes');
      expect(await call(read, { path: 'missing.txt' }, context)).toEqual({
        success: false,
        content: `File not found: ${dir}/missing.txt`,
      });
      expect((await call(read, { path: '.' }, context)).content).toBe(`Not a file: ${dir}`);
    });

    test('the backend reports errors with Node codes', async () => {
      const { dir, backend } = await fresh();
      await put(backend, `${dir}/big`, 'x'.repeat(5000));
      await expect(backend.readFile(`${dir}/big`, { maxBytes: 100 })).rejects.toMatchObject({ code: 'EFBIG' });
      await expect(backend.stat(`${dir}/none`)).rejects.toMatchObject({ code: 'ENOENT' });
      await expect(backend.readdir(`${dir}/big`)).rejects.toMatchObject({ code: 'ENOTDIR' });
      await expect(backend.openRead(dir)).rejects.toMatchObject({ code: 'EISDIR' });
      await expect(backend.mkdir(`${dir}/a/b`)).rejects.toMatchObject({ code: 'ENOENT' });
      await backend.mkdir(`${dir}/a/b`, { recursive: true });
      expect((await backend.stat(`${dir}/a/b`)).type).toBe('directory');
      const info = await backend.stat(`${dir}/big`);
      expect(info).toMatchObject({ type: 'file', size: 5000 });
      expect(info.mtimeMs).toBeGreaterThan(0);
      const handle = await backend.openRead(`${dir}/big`);
      try {
        const buffer = new Uint8Array(10);
        expect(handle.size).toBe(5000);
        expect(await handle.read(buffer, 4995, 10)).toBe(5);
        expect(await handle.read(buffer, 5000, 10)).toBe(0);
      } finally {
        await handle.close();
      }
      expect((await backend.readdir(dir)).sort()).toEqual(['a', 'big']);
    });

    test('symlinks: lstat, readlink and realpath see them; an atomic write replaces the target', async () => {
      const { dir, context, backend } = await fresh();
      await put(backend, `${dir}/target.txt`, 'target');
      const linked = await call(bash, { command: 'ln -s target.txt link.txt && chmod 640 target.txt' }, context);
      expect(linked.success).toBe(true);
      expect((await backend.lstat(`${dir}/link.txt`)).type).toBe('symlink');
      expect((await backend.stat(`${dir}/link.txt`)).type).toBe('file');
      expect(await backend.readlink(`${dir}/link.txt`)).toBe('target.txt');
      expect(await backend.realpath(`${dir}/link.txt`)).toBe(await backend.realpath(`${dir}/target.txt`));
      await backend.writeFileAtomic(`${dir}/link.txt`, Buffer.from('through the link'));
      expect((await backend.lstat(`${dir}/link.txt`)).type).toBe('symlink');
      expect(await text(backend, `${dir}/target.txt`)).toBe('through the link');
      expect((await backend.stat(`${dir}/target.txt`)).mode & 0o777).toBe(0o640);
    });

    test('grep, glob and list find what is there', async () => {
      const { dir, context, backend } = await fresh();
      await backend.mkdir(`${dir}/src/nested`, { recursive: true });
      await put(backend, `${dir}/src/a.ts`, 'const needle = 1;\nconst hay = 2;\n');
      await put(backend, `${dir}/src/nested/b.ts`, 'let needle = 3;\n');
      await put(backend, `${dir}/notes.md`, 'no match here\n');
      const grep = await call(createGrepTool(), { pattern: 'needle' }, context);
      expect(grep.success).toBe(true);
      expect(grep.content).toContain('src/a.ts:1:const needle = 1;');
      expect(grep.content).toContain('src/nested/b.ts:1:let needle = 3;');
      expect(grep.metadata).toMatchObject({ matches: 2 });
      expect((await call(createGrepTool(), { pattern: 'absent-word' }, context)).content).toBe('No matches found');
      const glob = await call(createGlobTool(), { pattern: '**/*.ts' }, context);
      expect(glob.success).toBe(true);
      expect(
        glob.content
          .split('\n')
          .filter((line) => line.endsWith('.ts'))
          .sort(),
      ).toEqual(['src/a.ts', 'src/nested/b.ts']);
      const list = await call(createListTool(), { path: '.' }, context);
      expect(list.success).toBe(true);
      expect(list.content).toMatch(/src\/$/m);
      expect(list.content).toMatch(/notes\.md$/m);
      const tree = await call(createListTool(), { path: '.', recursive: true }, context);
      expect(tree.content).toContain('b.ts');
    });

    test('bash runs in the working directory and reports exit codes and both streams', async () => {
      const { dir, context } = await fresh();
      const result = await call(bash, { command: 'echo out; echo err >&2; pwd' }, context);
      expect(result.success).toBe(true);
      expect(bashOutput(result)).toBe(`out\n${dir}\n\nerr\n`);
      const failed = await call(bash, { command: 'exit 7' }, context);
      expect(failed.success).toBe(false);
      expect(failed.metadata).toMatchObject({ exit_code: 7 });
      expect((await call(bash, { command: 'ls', working_dir: 'nope' }, context)).content).toBe(
        `Working directory not found: ${dir}/nope`,
      );
    });

    test('bash keeps the head and tail of huge output and counts every byte', async () => {
      const { context } = await fresh();
      const result = await call(bash, { command: 'seq 1 300000' }, context);
      const output = bashOutput(result);
      expect(output.startsWith('1\n2\n3\n')).toBe(true);
      expect(output.endsWith('299999\n300000\n')).toBe(true);
      expect(output).toMatch(/\[\.\.\. \d+ bytes of output omitted \.\.\.\]/);
      expect(result.metadata).toMatchObject({ stdout_bytes: 1_988_895 });
    });

    test('a process reads another process output through stdin', async () => {
      const { dir, backend } = await fresh();
      const first = backend.spawn({ argv: ['seq', '1', '50000'], cwd: dir });
      const second = backend.spawn({ argv: ['wc', '-l'], cwd: dir, stdin: first.stdout! });
      const chunks: Buffer[] = [];
      second.stdout!.on('data', (chunk: Buffer) => chunks.push(chunk));
      // `exited` settles when the process exits; what it wrote may still be in the pipe then, so
      // the output is read to its end too (waiting one more tick was not enough on a loaded machine).
      const ended = new Promise<void>((resolve) => {
        second.stdout!.once('end', resolve);
        second.stdout!.once('close', resolve);
      });
      const [firstExit, secondExit] = await Promise.all([first.exited, second.exited, ended]);
      expect(firstExit.exitCode).toBe(0);
      expect(secondExit.exitCode).toBe(0);
      expect(Buffer.concat(chunks).toString().trim()).toBe('50000');
      const missing = backend.spawn({ argv: ['no-such-program-rho'], cwd: dir });
      expect((await missing.exited).spawnError?.code).toBe('ENOENT');
    });

    test('a timeout kills the whole process group, even a child that ignores SIGTERM', async () => {
      const { context } = await fresh();
      const result = await call(
        bash,
        { command: `trap '' TERM; (trap '' TERM; sleep 60) & echo $! > child.pid; echo started; wait`, timeout: 1 },
        context,
      );
      expect(result.success).toBe(false);
      expect(bashOutput(result)).toBe('started\n\n\n[Command timed out after 1s and was killed]');
      expect(result.metadata).toMatchObject({ timed_out: true, exit_code: -1 });
      await expectGone(context, 'child.pid');
    });

    test('a cancellation kills the command and what it started', async () => {
      const controller = new AbortController();
      const { context, backend, dir } = await fresh(controller.signal);
      const running = call(bash, { command: 'sleep 60 & echo $! > pid.tmp && mv pid.tmp child.pid; wait' }, context);
      const deadline = Date.now() + 30_000;
      while (
        !(await backend.stat(`${dir}/child.pid`).then(
          () => true,
          () => false,
        ))
      ) {
        if (Date.now() > deadline) throw new Error('the command did not write child.pid');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      controller.abort();
      const result = await running;
      expect(result.success).toBe(false);
      expect(bashOutput(result)).toBe('\n\n[Command was cancelled and killed]');
      expect(result.metadata).toMatchObject({ cancelled: true });
      await expectGone({ ...context, signal: new AbortController().signal }, 'child.pid');
    });
  });

  /** The process whose pid is in `pidFile` is gone (or a zombie), as seen from the backend itself. */
  async function expectGone(context: ToolContext, pidFile: string): Promise<void> {
    const check = await call(
      bash,
      {
        command: `pid=$(cat ${pidFile}); state=$(awk '{print $3}' /proc/$pid/stat 2>/dev/null); if [ -z "$state" ] || [ "$state" = Z ]; then echo gone; else echo "alive $state"; fi`,
      },
      context,
    );
    expect(bashOutput(check).trim()).toBe('gone');
  }
}

function call<Args>(tool: Tool<Args>, args: Args, context: ToolContext): Promise<ToolResult> {
  return tool.handle({ callId: 'conformance-call', toolName: tool.name, arguments: args }, context);
}
