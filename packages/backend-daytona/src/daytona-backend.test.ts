import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDaytonaBackend, type DaytonaBackend } from './index.js';
import { startFakeDaytona, type FakeDaytona } from './testing/index.js';

let fake: FakeDaytona;
let backend: DaytonaBackend;

beforeAll(async () => {
  fake = await startFakeDaytona();
  backend = await createDaytonaBackend({
    apiKey: fake.apiKey,
    apiUrl: fake.apiUrl,
    environment: {},
  });
}, 60_000);

afterAll(async () => {
  await backend?.close();
  await fake?.close();
  expect(fake.unknownRoutes).toEqual([]);
});

describe('daytona backend over the fake API', () => {
  it('runs a command in the sandbox home', async () => {
    const child = backend.spawn({ argv: ['sh', '-c', 'pwd; echo err >&2; exit 3'], cwd: '/home/daytona' });
    const [out, err, exit] = await Promise.all([text(child.stdout!), text(child.stderr!), child.exited]);
    expect(out).toBe('/home/daytona\n');
    expect(err).toBe('err\n');
    expect(exit).toEqual({ exitCode: 3, signal: null });
  });

  it('writes, stats and reads files', async () => {
    await backend.mkdir('/home/daytona/project/sub', { recursive: true });
    await backend.writeFileAtomic('/home/daytona/project/sub/a.txt', Buffer.from('hello\n'));
    const info = await backend.stat('/home/daytona/project/sub/a.txt');
    expect(info.type).toBe('file');
    expect(info.size).toBe(6);
    expect(Buffer.from(await backend.readFile('/home/daytona/project/sub/a.txt', { maxBytes: 100 })).toString()).toBe(
      'hello\n',
    );
    expect(await backend.readdir('/home/daytona/project/sub')).toEqual(['a.txt']);
    await expect(backend.createExclusive('/home/daytona/project/sub/a.txt', Buffer.from('x'))).rejects.toMatchObject({
      code: 'EEXIST',
    });
    await expect(backend.stat('/home/daytona/nope')).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
