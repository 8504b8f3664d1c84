import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { ConfigError, SessionNotFoundError, SessionWriteError } from './errors.js';
import type { SessionMeta } from './session-meta.js';
import { readSessionMeta, updateSessionMeta } from './session-meta.js';
import { State } from './state.js';
import type { TraceSink } from './trace-sink.js';

/** `$RHO_HOME`, or `~/.config/rho`. */
export function rhoHome(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.RHO_HOME;
  return configured !== undefined && configured !== '' ? resolve(configured) : join(homedir(), '.config', 'rho');
}

/** A session as listed by {@link SessionStore.list}. */
export interface SessionInfo {
  id: string;
  directory: string;
  status: string;
  model: string | undefined;
  profile: string | undefined;
  startedAt: string;
  updatedAt: string | undefined;
  firstPrompt: string | undefined;
  costUsd: number | undefined;
  parentId: string | undefined;
  meta: Partial<SessionMeta>;
}

/** What a new session directory starts with. */
export interface CreateSessionOptions {
  /** The agent configuration to save as `config.yaml` (the resume source). */
  config?: Record<string, unknown>;
  model?: string;
  profile?: string;
  parentId?: string;
  workingDir?: string;
  /** A chosen id; by default 8 random hex characters. */
  id?: string;
}

/**
 * Session directories under one base directory (`$RHO_HOME/sessions` by default): create,
 * resolve by id, unique prefix, `latest` or path, list newest first.
 */
export class SessionStore {
  readonly baseDir: string;

  constructor(baseDir: string = join(rhoHome(), 'sessions')) {
    this.baseDir = resolve(baseDir);
  }

  /** Creates a session directory with `config.yaml` and `meta.json`; returns its id and path. */
  create(options: CreateSessionOptions = {}): { id: string; directory: string } {
    try {
      mkdirSync(this.baseDir, { recursive: true });
    } catch (error) {
      throw unusableBaseDir(this.baseDir, error);
    }
    for (let attempt = 0; ; attempt += 1) {
      const id = options.id ?? randomBytes(4).toString('hex');
      const directory = join(this.baseDir, id);
      try {
        mkdirSync(directory);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST' && options.id === undefined && attempt < 20) continue;
        throw unusableBaseDir(this.baseDir, error);
      }
      try {
        writeFileSync(join(directory, 'config.yaml'), stringify(options.config ?? {}));
        updateSessionMeta(directory, {
          id,
          status: 'created',
          started_at: new Date().toISOString(),
          ...(options.model === undefined ? {} : { model: options.model }),
          ...(options.profile === undefined ? {} : { profile: options.profile }),
          ...(options.workingDir === undefined ? {} : { working_dir: options.workingDir }),
          parent_id: options.parentId ?? null,
        });
      } catch (error) {
        // Nothing half-made is left behind.
        rmSync(directory, { recursive: true, force: true });
        throw SessionWriteError.from(join(directory, (error as { path?: string }).path?.endsWith('config.yaml') === true ? 'config.yaml' : 'meta.json'), error, 'The session could not be created.');
      }
      return { id, directory };
    }
  }

  /**
   * The directory of a session given by id, unique id prefix, `latest`, or a directory path
   * (which is how sessions of the Python original are opened).
   */
  resolve(reference: string): string {
    if (reference === 'latest') {
      const latest = this.list({ limit: 1 })[0];
      if (latest === undefined) throw new SessionNotFoundError({ message: `No sessions in ${this.baseDir} yet; run a task first.` });
      return latest.directory;
    }
    if (isAbsolute(reference) || reference.startsWith('.') || reference.includes('/')) {
      const directory = resolve(reference);
      if (existsSync(join(directory, 'trace.jsonl')) || existsSync(join(directory, 'meta.json'))) return directory;
      throw new SessionNotFoundError({ message: `${directory} is not a session directory (no trace.jsonl or meta.json).` });
    }
    const exact = join(this.baseDir, reference);
    if (reference !== '' && existsSync(exact)) return exact;
    const matches = this.ids().filter((id) => id.startsWith(reference));
    if (matches.length === 1) return join(this.baseDir, matches[0]!);
    if (matches.length > 1) {
      throw new SessionNotFoundError({ message: `Session prefix '${reference}' is ambiguous: it matches ${matches.slice(0, 10).join(', ')}${matches.length > 10 ? ', ...' : ''}. Give more characters.`, candidates: matches });
    }
    throw new SessionNotFoundError({ message: `Session not found: ${reference}. Use --list to see saved sessions.` });
  }

  /** Ids of all session directories. */
  ids(): string[] {
    try {
      return readdirSync(this.baseDir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    } catch {
      return [];
    }
  }

  /** Sessions, newest first. */
  list(options: { limit?: number } = {}): SessionInfo[] {
    const infos: SessionInfo[] = [];
    for (const id of this.ids()) {
      const info = this.info(join(this.baseDir, id));
      if (info !== undefined) infos.push(info);
    }
    infos.sort((a, b) => (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : 0));
    return options.limit === undefined ? infos : infos.slice(0, options.limit);
  }

  /** What is known of one session directory, or undefined when it is unreadable. */
  info(directory: string): SessionInfo | undefined {
    let startedFallback: string;
    try {
      startedFallback = statSync(directory).mtime.toISOString();
    } catch {
      return undefined;
    }
    const read = readSessionMeta(directory);
    const meta = read ?? {};
    const id = directory.split(/[\\/]/).pop() ?? directory;
    // A meta.json that exists but cannot be read says nothing about how the session ended.
    const unreadable = read === undefined && existsSync(join(directory, 'meta.json'));
    return {
      id,
      directory,
      status: unreadable ? 'unknown' : (meta.status ?? 'completed'),
      model: meta.model,
      profile: meta.profile,
      startedAt: meta.started_at ?? startedFallback,
      updatedAt: meta.updated_at,
      firstPrompt: meta.first_prompt ?? firstPromptFromTrace(directory),
      costUsd: meta.cost_usd ?? undefined,
      parentId: meta.parent_id ?? undefined,
      meta,
    };
  }

  /** Replays a session's trace into a State that appends to the same trace. */
  loadState(directory: string, options: { sink?: TraceSink } = {}): State {
    const path = join(directory, 'trace.jsonl');
    let content: Buffer;
    try {
      content = readFileSync(path);
    } catch {
      content = Buffer.alloc(0);
    }
    return State.fromJsonl(content, options);
  }
}

/** The first prompt of a trace (for sessions whose meta.json lacks it, e.g. the Python original's). */
function firstPromptFromTrace(directory: string): string | undefined {
  try {
    const fd = openSync(join(directory, 'trace.jsonl'), 'r');
    const buffer = Buffer.alloc(64 * 1024);
    let length: number;
    try {
      length = readSync(fd, buffer, 0, buffer.length, 0);
    } finally {
      closeSync(fd);
    }
    const head = buffer.subarray(0, length).toString('utf8');
    for (const line of head.split('\n')) {
      if (!line.includes('"run_start"') && !line.includes('"user"')) continue;
      try {
        const record = JSON.parse(line) as { type?: string; prompt?: string; role?: string; content?: string };
        if (record.type === 'run_start' && typeof record.prompt === 'string' && record.prompt !== '') return record.prompt;
        if (record.type === 'message' && record.role === 'user' && typeof record.content === 'string') return record.content;
      } catch {
        // torn line
      }
    }
  } catch {
    // no trace
  }
  return undefined;
}

/** The sessions directory cannot be created or written: a configuration problem, not a bug. */
function unusableBaseDir(baseDir: string, error: unknown): ConfigError {
  const code = (error as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
  const why: Record<string, string> = {
    ENOTDIR: 'a part of it is a file, not a directory',
    EEXIST: 'a file of that name is in the way',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EROFS: 'the file system is read-only',
    ENOSPC: 'no space left on the device',
  };
  return new ConfigError({
    message: `Cannot create sessions in ${baseDir}: ${code} (${why[code] ?? (error instanceof Error ? error.message : String(error))}). Set RHO_HOME to a writable directory (sessions go to $RHO_HOME/sessions).`,
    code: 'rho_home_unusable',
    cause: error,
  });
}
