import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { ConfigError, SessionNotFoundError, SessionWriteError } from './errors.js';
import type { SessionMeta } from './session-meta.js';
import { inspectSessionMeta, updateSessionMeta } from './session-meta.js';
import { State } from './state.js';
import { TraceReader } from './trace-reader.js';
import { writeSessionSettings } from './settings/saved-settings.js';
import type { TraceSink } from './trace-sink.js';

/**
 * rho's home directory: `$RHO_HOME` (a leading `~/` is the home directory, as a `.env` file has
 * no shell to expand it); else `$XDG_CONFIG_HOME/rho` when `XDG_CONFIG_HOME` is set to an
 * absolute path (the XDG base-directory rule: a relative one is ignored); else `~/.config/rho`.
 * Sessions live in its `sessions` folder, profiles in `profiles`, database aliases in
 * `databases.yaml`.
 */
export function rhoHome(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.RHO_HOME;
  if (configured === '~') return homedir();
  if (configured !== undefined && configured.startsWith('~/')) return join(homedir(), configured.slice(2));
  if (configured !== undefined && configured !== '') return resolve(configured);
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, 'rho');
  return join(homedir(), '.config', 'rho');
}

/** A session directory found by {@link SessionStore}: its id (the directory's name) and path. */
export interface SessionRef {
  /** The session id: the name of its directory. */
  id: string;
  /** Absolute path of the session directory. */
  directory: string;
}

/** A session as listed by {@link SessionStore.list}: what its `meta.json` says, checked. */
export interface SessionInfo extends SessionRef {
  /** `meta.json`'s status; `completed` when it has none (the Python original's); `unknown` when it cannot be read (see `problem`). */
  status: string;
  /** The model the session runs. */
  model: string | undefined;
  /** The permission profile it runs under. */
  profile: string | undefined;
  /** UTC ISO-8601 start time, in one form (`...Z`) so strings sort; the directory's mtime when `meta.json` lacks it. */
  startedAt: string;
  /** When `meta.json` was last written. */
  updatedAt: string | undefined;
  /** The task the session was started with (`meta.json`, else the first prompt of its trace). */
  firstPrompt: string | undefined;
  /** Cumulative cost in USD as of the end of the last run; undefined when unknown. */
  costUsd: number | undefined;
  /** Id of the parent session, for child agents. */
  parentId: string | undefined;
  /** Why `meta.json` could not be used (its status is then `unknown`), e.g. `meta.json is not valid JSON`. */
  problem?: string;
  /** `meta.json` as read (empty when missing or unusable). */
  meta: Partial<SessionMeta>;
}

/** Options of {@link SessionStore.list} and {@link SessionStore.info}. */
export interface SessionListOptions {
  /** At most this many sessions (the newest). */
  limit?: number;
  /**
   * Read the head of `trace.jsonl` for sessions whose `meta.json` has no `first_prompt` (the
   * Python original's). Default true; the rest of a trace is never read.
   */
  promptFromTrace?: boolean;
}

/** What a new session directory starts with. */
export interface CreateSessionOptions {
  /** The agent configuration to save as `config.yaml` (the resume source). */
  config?: Record<string, unknown>;
  /** The model, recorded in `meta.json` for listings. */
  model?: string;
  /** The permission profile's name, recorded in `meta.json`. */
  profile?: string;
  /** The parent session's id, for a child agent (delegate, agent-as-tool). */
  parentId?: string;
  /** The working directory the session's tools run in. */
  workingDir?: string;
  /** A chosen id; by default 8 random hex characters. */
  id?: string;
  /**
   * The queued task (and attempt) the session runs, recorded in `meta.json` from its creation
   * (`task_id`, `task_attempt`): a worker tells an attempt's session, and its workspace, by it
   * even when the attempt died before its trace said so.
   */
  task?: { id: string; attempt: number };
  /** Labels recorded in `meta.json` from its creation (`labels`): `rho ps --label` lists by them. */
  labels?: Readonly<Record<string, string>>;
}

/**
 * The session directories under one base directory (`$RHO_HOME/sessions` by default), for
 * everyone who reads or makes them (the CLI, the monitor, export): create one, resolve a
 * reference (id, unique id prefix, `latest`, or a directory path), list them newest first, read
 * one's `meta.json` and replay its trace. A session directory is one with a `meta.json` or a
 * `trace.jsonl` (the Python original's have no `meta.json`); other directories are not sessions.
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
        writeSessionSettings(directory, options.config ?? {});
        updateSessionMeta(directory, {
          id,
          status: 'created',
          started_at: new Date().toISOString(),
          ...(options.model === undefined ? {} : { model: options.model }),
          ...(options.profile === undefined ? {} : { profile: options.profile }),
          ...(options.workingDir === undefined ? {} : { working_dir: options.workingDir }),
          ...(options.task === undefined ? {} : { task_id: options.task.id, task_attempt: options.task.attempt }),
          ...(options.labels === undefined || Object.keys(options.labels).length === 0
            ? {}
            : { labels: { ...options.labels } }),
          parent_id: options.parentId ?? null,
        });
      } catch (error) {
        // Nothing half-made is left behind.
        rmSync(directory, { recursive: true, force: true });
        throw SessionWriteError.from(
          join(
            directory,
            (error as { path?: string }).path?.endsWith('config.yaml') === true ? 'config.yaml' : 'meta.json',
          ),
          error,
          'The session could not be created.',
        );
      }
      return { id, directory };
    }
  }

  /**
   * The directory of a session given by id, unique id prefix, `latest`, or a directory path
   * (which is how sessions of the Python original are opened). See {@link lookup}.
   */
  resolve(reference: string): string {
    return this.lookup(reference).directory;
  }

  /**
   * The session a reference names: `latest` (the newest session that is not a child agent's), a
   * directory path (anything with a `/` or starting with `.`), an exact id, or a prefix that
   * only one id starts with. Throws a {@link SessionNotFoundError} that says what to do: nothing
   * matches, the prefix is ambiguous (the matches are in `candidates`), or the path is not a
   * session directory.
   */
  lookup(reference: string): SessionRef {
    if (reference === '')
      throw new SessionNotFoundError({ message: 'Give a session id or a prefix of one (rho ps lists the sessions).' });
    if (reference === 'latest') {
      const latest = this.list({ promptFromTrace: false }).find((info) => info.parentId === undefined);
      if (latest === undefined)
        throw new SessionNotFoundError({ message: `No sessions in ${this.baseDir} yet; run a task first.` });
      return { id: latest.id, directory: latest.directory };
    }
    if (isAbsolute(reference) || reference.startsWith('.') || reference.includes('/')) {
      const directory = resolve(reference);
      if (existsSync(join(directory, 'trace.jsonl')) || existsSync(join(directory, 'meta.json')))
        return { id: basename(directory), directory };
      throw new SessionNotFoundError({
        message: `${directory} is not a session directory (no trace.jsonl or meta.json).`,
      });
    }
    const matches = this.match(reference);
    if (matches.length === 1) return matches[0]!;
    if (matches.length > 1) {
      const ids = matches.map((match) => match.id);
      throw new SessionNotFoundError({
        message: `Ambiguous prefix '${reference}': it matches ${ids.slice(0, 10).join(', ')}${ids.length > 10 ? `, ... (${ids.length} in all)` : ''}. Give more characters.`,
        candidates: ids,
      });
    }
    throw new SessionNotFoundError({
      message: `Session not found: ${reference} (no session id in ${this.baseDir} starts with it). Run rho ps or rho --list to see the sessions.`,
    });
  }

  /**
   * Every session whose id starts with `prefix`, sorted by id; an exact id matches alone (so a
   * session whose id is a prefix of others can still be named). The empty prefix matches all.
   */
  match(prefix: string): SessionRef[] {
    const ids = this.ids();
    if (prefix !== '' && ids.includes(prefix)) return [this.ref(prefix)];
    return ids.filter((id) => id.startsWith(prefix)).map((id) => this.ref(id));
  }

  /** Ids (directory names) of the directories under the base directory, sorted; empty when it does not exist. */
  ids(): string[] {
    try {
      return readdirSync(this.baseDir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort();
    } catch {
      return [];
    }
  }

  /**
   * The sessions, newest first (by start time, then id). Reads one `meta.json` per session, and
   * the head of a trace only for sessions whose `meta.json` has no first prompt, so ten thousand
   * sessions list in a fraction of a second. A missing base directory lists nothing.
   */
  list(options: SessionListOptions = {}): SessionInfo[] {
    const infos: SessionInfo[] = [];
    for (const id of this.ids()) {
      const info = this.info(join(this.baseDir, id), options);
      if (info !== undefined) infos.push(info);
    }
    infos.sort((a, b) =>
      a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
    );
    return options.limit === undefined ? infos : infos.slice(0, options.limit);
  }

  /**
   * What is known of one session directory (any directory, not only under the base), or
   * undefined when it is not a session (neither `meta.json` nor `trace.jsonl`). A `meta.json`
   * that cannot be used lists the session as `unknown` with the reason in `problem`, never as
   * completed.
   */
  info(directory: string, options: Pick<SessionListOptions, 'promptFromTrace'> = {}): SessionInfo | undefined {
    const reading = inspectSessionMeta(directory);
    if (reading.state === 'missing' && !existsSync(join(directory, 'trace.jsonl'))) return undefined;
    const meta = reading.state === 'read' ? reading.meta : {};
    const firstPrompt =
      stringOf(meta.first_prompt) ??
      ((options.promptFromTrace ?? true) ? firstPromptOfTrace(join(directory, 'trace.jsonl')) : undefined);
    return {
      id: basename(directory),
      directory,
      status: reading.state === 'unusable' ? 'unknown' : (stringOf(meta.status) ?? 'completed'),
      model: stringOf(meta.model),
      profile: stringOf(meta.profile),
      startedAt: typeof meta.started_at === 'string' ? normaliseTime(meta.started_at) : modifiedAt(directory),
      updatedAt: stringOf(meta.updated_at),
      firstPrompt,
      costUsd: typeof meta.cost_usd === 'number' && Number.isFinite(meta.cost_usd) ? meta.cost_usd : undefined,
      parentId: stringOf(meta.parent_id),
      ...(reading.state === 'unusable' ? { problem: reading.problem } : {}),
      meta,
    };
  }

  /** Replays a session's trace into a State (one that appends to the same trace when given its sink). */
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

  private ref(id: string): SessionRef {
    return { id, directory: join(this.baseDir, id) };
  }
}

// The first prompt is in the first records; a prompt longer than this is not looked for.
const PROMPT_HEAD_BYTES = 64 * 1024;
const PROMPT_CHUNK_BYTES = 8 * 1024;

/** The first prompt of a trace (for sessions whose meta.json lacks it, e.g. the Python original's), read from its head. */
function firstPromptOfTrace(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    let prompt: string | undefined;
    const reader = new TraceReader({ ignoreTypes: ['llm_start', 'llm_end', 'tool_start', 'tool_end', 'status'] });
    const visitor = {
      record(record: { type: string } & Record<string, unknown>) {
        if (prompt !== undefined) return;
        if (record.type === 'run_start' && typeof record.prompt === 'string' && record.prompt !== '')
          prompt = record.prompt;
        else if (record.type === 'message' && record.role === 'user' && typeof record.content === 'string')
          prompt = record.content;
      },
    };
    const buffer = Buffer.alloc(PROMPT_CHUNK_BYTES);
    for (let offset = 0; prompt === undefined && offset < PROMPT_HEAD_BYTES;) {
      const length = readSync(fd, buffer, 0, buffer.length, offset);
      if (length === 0) {
        // The whole trace was read: a last line without its newline may hold the prompt.
        reader.end(visitor);
        break;
      }
      // The reader keeps what it is given until the line is whole, so it gets a copy.
      reader.push(Buffer.from(buffer.subarray(0, length)), visitor);
      offset += length;
    }
    return prompt;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Python writes `+00:00` offsets and microseconds; sorting compares strings, so use one form. */
function normaliseTime(value: string): string {
  if (value.endsWith('Z') && value.length === 24) return value;
  const time = Date.parse(value);
  return Number.isNaN(time) ? value : new Date(time).toISOString();
}

function modifiedAt(directory: string): string {
  try {
    return statSync(directory).mtime.toISOString();
  } catch {
    return new Date(0).toISOString();
  }
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
