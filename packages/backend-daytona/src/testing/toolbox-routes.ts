import { promises as fs, type Stats } from 'node:fs';
import { dirname, join } from 'node:path';
import type {
  CreateSessionRequest,
  ExecuteRequest,
  FileInfo,
  FileSystemApi,
  FilesDownloadRequest,
  InfoApi,
  ProcessApi,
  SessionExecuteRequest,
} from '@daytona/toolbox-api-client';
import { FAKE_HOME, type FakeSandbox } from './fake-sandbox.js';
import { buildMultipart, parseMultipart } from './multipart.js';
import { bodyOf, FakeHttpError, optional, RawReply, required, route, type FakeRequest, type Route } from './routes.js';

/** Seconds `/process/execute` lets a command run when the request names no timeout (the daemon's default). */
const DEFAULT_EXECUTE_TIMEOUT_SECONDS = 360;

/**
 * The toolbox (daemon) operations the SDK calls for the backend, typed by the generated
 * `@daytona/toolbox-api-client` classes. `sandboxOf` finds the sandbox a request is for.
 */
export function toolboxRoutes(sandboxOf: (request: FakeRequest) => FakeSandbox): Route[] {
  const processRoute = route<ProcessApi>('ProcessApi');
  const filesRoute = route<FileSystemApi>('FileSystemApi');
  const infoRoute = route<InfoApi>('InfoApi');
  const current = { sandbox: undefined as FakeSandbox | undefined };
  const sandbox = (): FakeSandbox => {
    if (current.sandbox === undefined) throw new Error('no sandbox');
    return current.sandbox;
  };
  // Each route first resolves its sandbox (from the URL) into `current`, then runs the typed handler.
  const bind =
    <T>(args: (request: FakeRequest) => T) =>
    (request: FakeRequest): T => {
      current.sandbox = sandboxOf(request);
      return args(request);
    };

  return [
    infoRoute(
      'getUserHomeDir',
      'GET',
      '/user-home-dir',
      bind(() => []),
      async () => ({ dir: FAKE_HOME }),
    ),
    processRoute(
      'executeCommand',
      'POST',
      '/process/execute',
      bind((request) => [bodyOf<ExecuteRequest>(request)]),
      async (body) => {
        const child = sandbox().start(body.command, {
          ...(body.cwd === undefined ? {} : { cwd: body.cwd }),
          ...(body.envs === undefined ? {} : { env: body.envs }),
        });
        const output: Buffer[] = [];
        child.stdout?.on('data', (chunk: Buffer) => output.push(chunk));
        child.stderr?.on('data', (chunk: Buffer) => output.push(chunk));
        const timeout = setTimeout(
          () => child.pid !== undefined && process.kill(-child.pid, 'SIGKILL'),
          (body.timeout ?? DEFAULT_EXECUTE_TIMEOUT_SECONDS) * 1000,
        );
        const exitCode = await new Promise<number>((resolve, reject) => {
          child.once('close', (code) => resolve(code ?? -1));
          child.once('error', (error) =>
            reject(new FakeHttpError(500, `the fake could not start bubblewrap: ${error.message}`)),
          );
        });
        clearTimeout(timeout);
        return { exitCode, result: Buffer.concat(output).toString('utf8') };
      },
    ),
    processRoute(
      'createSession',
      'POST',
      '/process/session',
      bind((request) => [bodyOf<CreateSessionRequest>(request)]),
      async (body) => {
        if (sandbox().sessions.has(body.sessionId)) {
          throw new FakeHttpError(409, `session ${body.sessionId} already exists`, 'CONFLICT');
        }
        sandbox().sessions.set(body.sessionId, new Map());
      },
      201,
    ),
    processRoute(
      'sessionExecuteCommand',
      'POST',
      '/process/session/{sessionId}/exec',
      bind((request) => [request.params['sessionId'] ?? '', bodyOf<SessionExecuteRequest>(request)]),
      async (sessionId, body) => {
        if (!sandbox().sessions.has(sessionId))
          throw new FakeHttpError(404, `session ${sessionId} not found`, 'NOT_FOUND');
        const command = sandbox().runInSession(sessionId, body.command);
        if (body.runAsync === true || body.async === true) return { cmdId: command.id };
        await command.done;
        const stdout = Buffer.concat(command.stdout).toString('utf8');
        const stderr = Buffer.concat(command.stderr).toString('utf8');
        return {
          cmdId: command.id,
          ...(command.exitCode === undefined ? {} : { exitCode: command.exitCode }),
          output: stdout + stderr,
          stdout,
          stderr,
        };
      },
    ),
    processRoute(
      'getSessionCommand',
      'GET',
      '/process/session/{sessionId}/command/{commandId}',
      bind((request) => [request.params['sessionId'] ?? '', request.params['commandId'] ?? '']),
      async (sessionId, commandId) => {
        const command = commandOf(sandbox(), sessionId, commandId);
        return {
          id: command.id,
          command: command.command,
          ...(command.exitCode === undefined ? {} : { exitCode: command.exitCode }),
        };
      },
    ),
    processRoute(
      'getSessionCommandLogs',
      'GET',
      '/process/session/{sessionId}/command/{commandId}/logs',
      bind((request) => [
        request.params['sessionId'] ?? '',
        request.params['commandId'] ?? '',
        request.query.get('follow') === 'true' ? true : undefined,
      ]),
      async (sessionId, commandId, follow) => {
        if (follow === true)
          throw new FakeHttpError(400, 'follow=true is a WebSocket stream; the fake does not serve it', 'BAD_REQUEST');
        const command = commandOf(sandbox(), sessionId, commandId);
        const stdout = Buffer.concat(command.stdout).toString('utf8');
        const stderr = Buffer.concat(command.stderr).toString('utf8');
        return { output: stdout + stderr, stdout, stderr };
      },
    ),
    processRoute(
      'deleteSession',
      'DELETE',
      '/process/session/{sessionId}',
      bind((request) => [request.params['sessionId'] ?? '']),
      async (sessionId) => {
        if (!sandbox().deleteSession(sessionId))
          throw new FakeHttpError(404, `session ${sessionId} not found`, 'NOT_FOUND');
      },
      204,
    ),
    filesRoute(
      'getFileInfo',
      'GET',
      '/files/info',
      bind((request) => [required(request.query, 'path')]),
      async (path) => fileInfo(path, await statOrFail(sandbox().hostPath(path), path)),
    ),
    filesRoute(
      'listFiles',
      'GET',
      '/files',
      bind((request) => {
        const depth = optional(request.query, 'depth');
        return [optional(request.query, 'path'), depth === undefined ? undefined : Number(depth)];
      }),
      async (path = FAKE_HOME) => {
        const host = sandbox().hostPath(path);
        const info = await statOrFail(host, path);
        if (!info.isDirectory()) throw new FakeHttpError(400, `${path}: not a directory`, 'BAD_REQUEST');
        const names = await fs.readdir(host);
        const infos: FileInfo[] = [];
        for (const name of names) {
          const stats = await fs.lstat(join(host, name)).catch(() => undefined);
          if (stats !== undefined) infos.push(fileInfo(`${path.replace(/\/$/, '')}/${name}`, stats));
        }
        return infos;
      },
    ),
    filesRoute(
      'createFolder',
      'POST',
      '/files/folder',
      bind((request) => [required(request.query, 'path'), required(request.query, 'mode')]),
      async (path, mode) => {
        writableOrFail(sandbox(), path);
        await fs.mkdir(sandbox().hostPath(path), { recursive: true, mode: Number.parseInt(mode, 8) });
      },
      201,
    ),
    filesRoute(
      'deleteFile',
      'DELETE',
      '/files',
      bind((request) => [required(request.query, 'path'), optional(request.query, 'recursive') === 'true']),
      async (path, recursive) => {
        writableOrFail(sandbox(), path);
        const host = sandbox().hostPath(path);
        const info = await fs.lstat(host).catch(() => undefined);
        if (info === undefined) throw new FakeHttpError(404, `${path}: no such file or directory`, 'FILE_NOT_FOUND');
        if (info.isDirectory() && recursive !== true) {
          throw new FakeHttpError(400, `${path} is a directory: set recursive to delete it`, 'BAD_REQUEST');
        }
        await fs.rm(host, { recursive: true, force: true });
      },
      204,
    ),
    filesRoute(
      'moveFile',
      'POST',
      '/files/move',
      bind((request) => [required(request.query, 'source'), required(request.query, 'destination')]),
      async (source, destination) => {
        writableOrFail(sandbox(), source);
        writableOrFail(sandbox(), destination);
        await fs.rename(sandbox().hostPath(source), sandbox().hostPath(destination)).catch((error: unknown) => {
          throw fileError(error, source);
        });
      },
    ),
    filesRoute(
      'setFilePermissions',
      'POST',
      '/files/permissions',
      bind((request) => [
        required(request.query, 'path'),
        optional(request.query, 'owner'),
        optional(request.query, 'group'),
        optional(request.query, 'mode'),
      ]),
      async (path, _owner, _group, mode) => {
        writableOrFail(sandbox(), path);
        if (mode !== undefined) {
          await fs.chmod(sandbox().hostPath(path), Number.parseInt(mode, 8)).catch((error: unknown) => {
            throw fileError(error, path);
          });
        }
      },
    ),
    // The generated `uploadFiles(options)` takes its multipart body through axios options, not an
    // argument: the typed route declares the operation (method, path, void reply) and the upload
    // itself is read from the raw request below.
    filesRoute(
      'uploadFiles',
      'POST',
      '/files/bulk-upload',
      bind(() => []),
      async () => undefined,
    ),
    filesRoute(
      'downloadFiles',
      'POST',
      '/files/bulk-download',
      bind((request) => [bodyOf<FilesDownloadRequest>(request)]),
      async (body) => {
        const parts = [];
        for (const path of body.paths) {
          try {
            const data = await fs.readFile(sandbox().hostPath(path));
            parts.push({ name: 'file', filename: path, contentType: 'application/octet-stream', data });
          } catch (error) {
            const failure = fileError(error, path);
            parts.push({
              name: 'error',
              filename: path,
              contentType: 'application/json',
              data: Buffer.from(
                JSON.stringify({ message: failure.message, statusCode: failure.status, code: failure.code }),
              ),
            });
          }
        }
        const { body: multipart, contentType } = buildMultipart(parts);
        return new RawReply(200, contentType, multipart);
      },
    ),
  ].map((entry) =>
    entry.operation === 'uploadFiles'
      ? { ...entry, invoke: async (request: FakeRequest) => upload(sandboxOf(request), request) }
      : entry,
  );
}

async function upload(sandbox: FakeSandbox, request: FakeRequest): Promise<void> {
  const parts = parseMultipart(request.body, request.raw.headers['content-type'] ?? '');
  const files = new Map<string, { path?: string; data?: Buffer }>();
  for (const part of parts) {
    const match = /^files\[(\d+)\]\.(path|file)$/.exec(part.name);
    if (match === null) continue;
    const [, index = '', field] = match;
    const entry = files.get(index) ?? {};
    if (field === 'path') entry.path = part.data.toString('utf8');
    else entry.data = part.data;
    files.set(index, entry);
  }
  for (const { path, data } of files.values()) {
    if (path === undefined || data === undefined) throw new FakeHttpError(400, 'incomplete upload part', 'BAD_REQUEST');
    writableOrFail(sandbox, path);
    const host = sandbox.hostPath(path);
    await fs.mkdir(dirname(host), { recursive: true });
    await fs.writeFile(host, data);
  }
}

function commandOf(sandbox: FakeSandbox, sessionId: string, commandId: string) {
  const command = sandbox.sessions.get(sessionId)?.get(commandId);
  if (command === undefined) throw new FakeHttpError(404, `command ${commandId} not found`, 'PROCESS_NOT_FOUND');
  return command;
}

function writableOrFail(sandbox: FakeSandbox, path: string): void {
  if (!sandbox.writable(path)) throw new FakeHttpError(403, `${path}: permission denied`, 'FILE_ACCESS_DENIED');
}

async function statOrFail(host: string, path: string): Promise<Stats> {
  try {
    return await fs.stat(host);
  } catch (error) {
    throw fileError(error, path);
  }
}

function fileError(error: unknown, path: string): FakeHttpError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new FakeHttpError(404, `${path}: no such file or directory`, 'FILE_NOT_FOUND');
  if (code === 'EACCES' || code === 'EPERM')
    return new FakeHttpError(403, `${path}: permission denied`, 'FILE_ACCESS_DENIED');
  if (code === 'EISDIR') return new FakeHttpError(400, `${path}: is a directory`, 'BAD_REQUEST');
  if (code === 'ENOTDIR') return new FakeHttpError(400, `${path}: not a directory`, 'BAD_REQUEST');
  return new FakeHttpError(500, `${path}: ${(error as Error).message}`, 'INTERNAL_SERVER_ERROR');
}

/** The daemon's file info: Go's `FileMode.String()` as `mode`, octal permissions. */
function fileInfo(path: string, stats: Stats): FileInfo {
  const kind = stats.isDirectory() ? 'd' : stats.isSymbolicLink() ? 'L' : '-';
  const bits = 'rwxrwxrwx'
    .split('')
    .map((letter, index) => (stats.mode & (1 << (8 - index)) ? letter : '-'))
    .join('');
  const modified = stats.mtime.toISOString();
  return {
    name: path.split('/').pop() ?? path,
    path,
    isDir: stats.isDirectory(),
    size: stats.size,
    mode: `${kind}${bits}`,
    permissions: (stats.mode & 0o777).toString(8).padStart(4, '0'),
    owner: String(stats.uid),
    group: String(stats.gid),
    modTime: modified,
    modifiedAt: modified,
  };
}
