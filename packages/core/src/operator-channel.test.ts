import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FileControlChannel } from './control-channel.js';
import { FileOperatorChannel } from './operator-channel.js';
import { SessionStore } from './session-store.js';

const here = dirname(fileURLToPath(import.meta.url));

function sessionDirectory(): string {
  return new SessionStore(join(mkdtempSync(join(tmpdir(), 'rho-operator-')), 'sessions')).create({}).directory;
}

describe('FileOperatorChannel: cancel, pause, resume', () => {
  it('creates cancel and pause, removes pause on resume, and reports what changed', async () => {
    const directory = sessionDirectory();
    const operator = new FileOperatorChannel(directory);
    const agent = new FileControlChannel(directory);
    expect(await agent.isCancelRequested()).toBe(false);
    expect(await operator.requestCancel()).toBe('requested');
    expect(await operator.requestCancel()).toBe('unchanged');
    expect(existsSync(join(directory, 'cancel'))).toBe(true);
    expect(await agent.isCancelRequested()).toBe(true);
    await agent.clearCancel();
    expect(await agent.isCancelRequested()).toBe(false);
    expect(await operator.requestResume()).toBe('unchanged');
    expect(await operator.requestPause()).toBe('requested');
    expect(await operator.requestPause()).toBe('unchanged');
    expect(await agent.isPauseRequested()).toBe(true);
    expect(await operator.requestResume()).toBe('requested');
    expect(existsSync(join(directory, 'pause'))).toBe(false);
    expect(await agent.isPauseRequested()).toBe(false);
  });

  it('counts concurrent requests once', async () => {
    const directory = sessionDirectory();
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () => new FileOperatorChannel(directory).requestPause()),
    );
    expect(outcomes.filter((outcome) => outcome === 'requested')).toHaveLength(1);
  });

  it('fails clearly for a directory that does not exist', async () => {
    const missing = join(dirname(sessionDirectory()), 'nope');
    await expect(new FileOperatorChannel(missing).requestPause()).rejects.toThrow(/ENOENT/);
    await expect(new FileOperatorChannel(missing).sendDirective('x')).rejects.toThrow(/ENOENT/);
  });
});

describe('FileOperatorChannel: directives', () => {
  it('appends one JSON line per directive, which the agent side takes exactly once', async () => {
    const directory = sessionDirectory();
    const operator = new FileOperatorChannel(directory);
    await operator.sendDirective('focus on "the logs"\nthen stop');
    await operator.sendDirective('ünïcode ✓');
    expect(readFileSync(join(directory, 'directives.jsonl'), 'utf8')).toBe(
      '{"text":"focus on \\"the logs\\"\\nthen stop"}\n{"text":"ünïcode ✓"}\n',
    );
    const agent = new FileControlChannel(directory);
    const taken = await agent.takeDirectives(0);
    expect(taken.texts).toEqual(['focus on "the logs"\nthen stop', 'ünïcode ✓']);
    expect(taken.items!.map((item) => item.cursor)).toEqual([
      Buffer.byteLength('{"text":"focus on \\"the logs\\"\\nthen stop"}\n'),
      taken.cursor,
    ]);
    // Taken from its cursor, nothing is delivered twice; a later directive is delivered next.
    expect((await agent.takeDirectives(taken.cursor)).texts).toEqual([]);
    await operator.sendDirective('third');
    expect((await agent.takeDirectives(taken.cursor)).texts).toEqual(['third']);
  });

  it('refuses an empty directive with a ConfigError and writes nothing', async () => {
    const directory = sessionDirectory();
    await expect(new FileOperatorChannel(directory).sendDirective('  \n')).rejects.toMatchObject({
      name: 'ConfigError',
      message: expect.stringContaining('empty') as unknown,
    });
    expect(existsSync(join(directory, 'directives.jsonl'))).toBe(false);
  });

  it('keeps every line whole when several processes append at once', async () => {
    const directory = sessionDirectory();
    const writers = 6;
    const perWriter = 150;
    const script = join(directory, 'writer.mts');
    const source = join(here, 'operator-channel.ts');
    writeFileSync(
      script,
      `import { FileOperatorChannel } from ${JSON.stringify(source)};\n` +
        `const [directory, writer, count] = process.argv.slice(2);\n` +
        `const operator = new FileOperatorChannel(directory);\n` +
        // Long texts make torn or interleaved lines likely if writes were not atomic appends.
        `for (let index = 0; index < Number(count); index += 1) await operator.sendDirective(\`writer \${writer} directive \${index} \` + 'x'.repeat(3000 + index));\n`,
    );
    await Promise.all(
      Array.from(
        { length: writers },
        (_, writer) =>
          new Promise<void>((resolve, reject) => {
            const child = spawn(
              process.execPath,
              ['--import', 'tsx', script, directory, String(writer), String(perWriter)],
              { cwd: here, stdio: ['ignore', 'ignore', 'pipe'] },
            );
            let stderr = '';
            child.stderr.on('data', (chunk: Buffer) => {
              stderr += chunk.toString();
            });
            child.on('error', reject);
            child.on('close', (code) =>
              code === 0 ? resolve() : reject(new Error(`writer ${writer} exited ${code}: ${stderr}`)),
            );
          }),
      ),
    );
    const lines = readFileSync(join(directory, 'directives.jsonl'), 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(writers * perWriter);
    const seen = new Set(
      lines.map((line) => {
        const { text } = JSON.parse(line) as { text: string };
        const match = /^writer (\d+) directive (\d+) (x+)$/.exec(text);
        expect(match).not.toBeNull();
        expect(match![3]!.length).toBe(3000 + Number(match![2]));
        return `${match![1]}/${match![2]}`;
      }),
    );
    expect(seen.size).toBe(writers * perWriter);
    const taken = await new FileControlChannel(directory).takeDirectives(0);
    expect(taken.texts).toHaveLength(writers * perWriter);
  });

  it('reports a full disk as a SessionWriteError saying the directive was not sent', async () => {
    // /dev/full fails every write with ENOSPC: a directives.jsonl linked to it is a full disk
    // without root. (Linux has it; elsewhere there is nothing to test this with.)
    if (!existsSync('/dev/full')) return;
    const directory = sessionDirectory();
    symlinkSync('/dev/full', join(directory, 'directives.jsonl'));
    await expect(new FileOperatorChannel(directory).sendDirective('hello')).rejects.toMatchObject({
      name: 'SessionWriteError',
      errno: 'ENOSPC',
      message: expect.stringContaining('The directive was not sent') as unknown,
    });
  });
});

describe('FileControlChannel: heartbeat and status', () => {
  it('writes the heartbeat and the status to meta.json, keeping its other fields', async () => {
    const directory = sessionDirectory();
    const before = JSON.parse(readFileSync(join(directory, 'meta.json'), 'utf8')) as Record<string, unknown>;
    const agent = new FileControlChannel(directory);
    await agent.heartbeat();
    const beat = JSON.parse(readFileSync(join(directory, 'meta.json'), 'utf8')) as Record<string, unknown>;
    expect(beat).toMatchObject({ id: before.id, status: 'created', started_at: before.started_at });
    expect(Date.parse(String(beat.heartbeat_at))).not.toBeNaN();
    await agent.reportStatus('paused');
    expect(JSON.parse(readFileSync(join(directory, 'meta.json'), 'utf8'))).toMatchObject({
      id: before.id,
      status: 'paused',
    });
  });

  it('fails (for the session to ignore) when the directory is gone', async () => {
    const missing = join(dirname(sessionDirectory()), 'gone');
    await expect(new FileControlChannel(missing).heartbeat()).rejects.toThrow(/ENOENT/);
  });
});
