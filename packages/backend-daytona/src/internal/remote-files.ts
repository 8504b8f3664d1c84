import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import type { FileInfo, ReadHandle } from '@rho/core';
import type { SandboxConnection } from './sandbox-connection.js';
import { shellQuote } from './shell.js';

/** Files up to this size are downloaded whole when opened; larger ones are read by ranges. */
const WHOLE_FILE_BYTES = 8 * 1024 * 1024;

/** The messages of coreutils and of the Daytona daemon, to Node's error codes. */
const ERRNO_MESSAGES: [RegExp, string][] = [
  [/no such file or directory|not found|does not exist/i, 'ENOENT'],
  [/not a directory/i, 'ENOTDIR'],
  [/is a directory/i, 'EISDIR'],
  [/file exists|already exists/i, 'EEXIST'],
  [/permission denied|access denied|forbidden|operation not permitted/i, 'EACCES'],
  [/too many levels of symbolic links/i, 'ELOOP'],
  [/directory not empty/i, 'ENOTEMPTY'],
  [/invalid argument/i, 'EINVAL'],
];

/** A Node-style error (`code`, `path`, `syscall`) from a message of the sandbox. */
export function errnoError(message: string, path: string, syscall: string, fallback = 'EIO'): NodeJS.ErrnoException {
  const marked = /rho-errno:([A-Z]+)/.exec(message)?.[1];
  const code = marked ?? ERRNO_MESSAGES.find(([pattern]) => pattern.test(message))?.[1] ?? fallback;
  return Object.assign(new Error(`${code}: ${message.trim() || 'failed'}, ${syscall} '${path}'`), {
    code,
    path,
    syscall,
  });
}

/** The same, for an error the SDK threw (its class and status code say what went wrong). */
export function sdkErrnoError(error: unknown, path: string, syscall: string): NodeJS.ErrnoException {
  const statusCode = (error as { statusCode?: number }).statusCode;
  const message = error instanceof Error ? error.message : String(error);
  const fallback = statusCode === 404 ? 'ENOENT' : statusCode === 403 ? 'EACCES' : 'EIO';
  return errnoError(message, path, syscall, fallback);
}

/**
 * The file operations of the backend. Data moves through the SDK's file-system API (upload,
 * download, move, permissions, list, create folder); what that API cannot say (the type of an
 * entry without following links, mode bits, symlink targets, canonical paths, an exclusive
 * create) is asked of GNU coreutils in one short command each.
 */
export class RemoteFiles {
  constructor(private readonly connection: SandboxConnection) {}

  /** `stat` (following links) or `lstat`. */
  async stat(path: string, follow: boolean): Promise<FileInfo> {
    const result = await this.connection.exec(`stat ${follow ? '-L ' : ''}-c '%f %s %Y' -- ${shellQuote(path)} 2>&1`);
    if (result.exitCode !== 0) throw errnoError(result.output, path, follow ? 'stat' : 'lstat');
    const [rawMode = '0', size = '0', mtime = '0'] = result.output.trim().split(/\s+/);
    const mode = Number.parseInt(rawMode, 16);
    const format = mode & 0o170000;
    const type =
      format === 0o100000 ? 'file' : format === 0o040000 ? 'directory' : format === 0o120000 ? 'symlink' : 'other';
    return { type, size: Number(size), mode, mtimeMs: Number(mtime) * 1000 };
  }

  async realpath(path: string): Promise<string> {
    const result = await this.connection.exec(`realpath -e -- ${shellQuote(path)} 2>&1`);
    if (result.exitCode !== 0) throw errnoError(result.output, path, 'realpath');
    return result.output.replace(/\n$/, '');
  }

  async readlink(path: string): Promise<string> {
    const quoted = shellQuote(path);
    const result = await this.connection.exec(
      `if [ -L ${quoted} ]; then readlink -- ${quoted}; elif [ -e ${quoted} ]; then echo rho-errno:EINVAL; exit 1; ` +
        `else echo rho-errno:ENOENT; exit 1; fi`,
    );
    if (result.exitCode !== 0) throw errnoError(result.output, path, 'readlink');
    return result.output.replace(/\n$/, '');
  }

  async readdir(path: string): Promise<string[]> {
    const info = await this.stat(path, true);
    if (info.type !== 'directory') throw errnoError('rho-errno:ENOTDIR', path, 'scandir');
    try {
      const entries = await this.connection.sandbox.fs.listFiles(path);
      return entries.map((entry) => entry.name).filter((name) => name !== '.' && name !== '..');
    } catch (error) {
      throw sdkErrnoError(error, path, 'scandir');
    }
  }

  async download(path: string): Promise<Buffer> {
    try {
      return await this.connection.sandbox.fs.downloadFile(path);
    } catch (error) {
      throw sdkErrnoError(error, path, 'open');
    }
  }

  async openRead(path: string): Promise<ReadHandle> {
    const info = await this.stat(path, true);
    if (info.type === 'directory') throw errnoError('rho-errno:EISDIR', path, 'read');
    let whole: Promise<Buffer> | undefined;
    const size = info.size;
    return {
      size,
      read: async (buffer, position, length) => {
        const wanted = Math.min(length, buffer.byteLength);
        if (wanted <= 0) return 0;
        if (size <= WHOLE_FILE_BYTES) {
          whole ??= this.download(path);
          const data = await whole;
          const part = data.subarray(position, position + wanted);
          buffer.set(part, 0);
          return part.length;
        }
        const part = await this.readRange(path, position, wanted);
        buffer.set(part, 0);
        return part.length;
      },
      close: async () => {
        whole = undefined;
      },
    };
  }

  /** Bytes `[position, position + length)` of a large file, base64 over the execute endpoint. */
  private async readRange(path: string, position: number, length: number): Promise<Buffer> {
    const result = await this.connection.exec(
      `tail -c +${position + 1} -- ${shellQuote(path)} | head -c ${length} | base64 -w 0`,
    );
    if (result.exitCode !== 0) throw errnoError(result.output, path, 'read');
    return Buffer.from(result.output.trim(), 'base64');
  }

  async readFile(path: string, maxBytes: number): Promise<Uint8Array> {
    const info = await this.stat(path, true);
    if (info.type === 'directory') throw errnoError('rho-errno:EISDIR', path, 'read');
    if (info.size > maxBytes) throw tooLarge(path, maxBytes);
    const data = await this.download(path);
    if (data.length > maxBytes) throw tooLarge(path, maxBytes);
    return data;
  }

  /**
   * Uploads to a temporary file next to the target (the link's target, for a symlink), gives it
   * the target's permission bits, and renames it over the target.
   */
  async writeFileAtomic(requestedPath: string, data: Uint8Array): Promise<void> {
    const quoted = shellQuote(requestedPath);
    const prepared = await this.connection.exec(
      `p=$(realpath -e -- ${quoted} 2>/dev/null) || p=${quoted}; d=$(dirname -- "$p"); ` +
        `[ -d "$d" ] || { echo rho-errno:ENOENT; exit 1; }; [ -d "$p" ] && { echo rho-errno:EISDIR; exit 1; }; ` +
        `m=$(stat -c %a -- "$p" 2>/dev/null); printf '%s\\n%s\\n' "$p" "$m"`,
    );
    if (prepared.exitCode !== 0) throw errnoError(prepared.output, requestedPath, 'open');
    const [target = requestedPath, mode = ''] = prepared.output.split('\n');
    const temporary = posix.join(
      posix.dirname(target),
      `.${posix.basename(target)}.${randomBytes(6).toString('hex')}.tmp`,
    );
    const fs = this.connection.sandbox.fs;
    try {
      await fs.uploadFile(Buffer.from(data), temporary);
      if (mode !== '') await fs.setFilePermissions(temporary, { mode });
      await fs.moveFiles(temporary, target);
    } catch (error) {
      await fs.deleteFile(temporary).catch(() => undefined);
      throw sdkErrnoError(error, requestedPath, 'open');
    }
  }

  /** Uploads to a temporary file, then hard-links it to the path (`ln` fails if anything is there). */
  async createExclusive(path: string, data: Uint8Array): Promise<void> {
    const quoted = shellQuote(path);
    const parent = posix.dirname(path);
    const check = await this.connection.exec(
      `[ -e ${quoted} ] || [ -L ${quoted} ] && { echo rho-errno:EEXIST; exit 1; }; ` +
        `[ -d ${shellQuote(parent)} ] || { echo rho-errno:ENOENT; exit 1; }; exit 0`,
    );
    if (check.exitCode !== 0) throw errnoError(check.output, path, 'open');
    const temporary = posix.join(parent, `.${posix.basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await this.connection.sandbox.fs.uploadFile(Buffer.from(data), temporary);
    } catch (error) {
      throw sdkErrnoError(error, path, 'open');
    }
    const linked = await this.connection.exec(
      `ln -T -- ${shellQuote(temporary)} ${quoted} 2>&1; s=$?; rm -f -- ${shellQuote(temporary)}; exit $s`,
    );
    if (linked.exitCode !== 0) throw errnoError(linked.output, path, 'open');
  }

  async mkdir(path: string, recursive: boolean): Promise<void> {
    if (recursive) {
      const existing = await this.stat(path, true).catch(() => undefined);
      if (existing?.type === 'directory') return;
      if (existing !== undefined) throw errnoError('rho-errno:EEXIST', path, 'mkdir');
      try {
        await this.connection.sandbox.fs.createFolder(path, '755');
      } catch (error) {
        throw sdkErrnoError(error, path, 'mkdir');
      }
      return;
    }
    const result = await this.connection.exec(`mkdir -- ${shellQuote(path)} 2>&1`);
    if (result.exitCode !== 0) throw errnoError(result.output, path, 'mkdir');
  }
}

function tooLarge(path: string, maxBytes: number): NodeJS.ErrnoException {
  return Object.assign(new Error(`EFBIG: file is larger than ${maxBytes} bytes, read '${path}'`), {
    code: 'EFBIG',
    path,
  });
}
