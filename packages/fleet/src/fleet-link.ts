import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type {
  ChildSessionInfo,
  ControlChannel,
  SecretRedactor,
  SessionOptions,
  SessionStatus,
  TraceRecord,
} from '@rho/core';
import { TraceReader } from '@rho/core';
import { FileControlChannel } from '@rho/core/internal';
import { CompositeControlChannel } from './composite-control.js';
import { connectFleet } from './connect-fleet.js';
import { FleetSessionTakenError } from './errors.js';
import { redactUrl } from './fleet-config.js';
import type { FleetConfig } from './fleet-config.js';
import type { Fleet, FleetWarning, SessionAttachment, SessionRegistration } from './types.js';

/** Options of {@link FleetLink.start}. */
export interface FleetLinkOptions {
  /** Told what the user should know (the database is away, the mirror fell behind); printed by the caller. */
  onWarning?: (message: string) => void;
  /** Labels every session of this process registers with (`--label key=value`). */
  labels?: Record<string, string>;
  /** First wait before connecting again after a failure, in ms (doubles up to 15 s). */
  retryMs?: number;
  /** The host name sessions register under (`RHO_FLEET_HOST`); the machine's by default. */
  host?: string;
  /** The secrets kept out of the fleet's tables (see `knownSecretsRedactor`). */
  redactor?: SecretRedactor;
}

/** What a session of this process gives the fleet and gets from it: see {@link FleetLink.sessionOptions}. */
interface LinkedSession {
  registration: SessionRegistration;
  directory: string;
  /** Set once registered; until then the file channel alone answers and records wait in the trace. */
  attachment: SessionAttachment | undefined;
  /** The status of the last `run_end` (or `status`) record, for the final registration. */
  status: SessionStatus | undefined;
  closed: boolean;
  /** The registration in progress, if any. */
  attaching?: Promise<void>;
  /** Set when the fleet refused the session (another process runs it): this run stops. */
  refused?: boolean;
}

/**
 * The fleet's side of the channel of a session the fleet refused because another process runs
 * it: the run is asked to stop (one session, one process), and nothing goes to the fleet.
 */
const REFUSED: ControlChannel = {
  isCancelRequested: async () => true,
  isPauseRequested: async () => false,
  takeDirectives: async (cursor) => ({ texts: [], cursor }),
  clearCancel: async () => {},
  heartbeat: async () => {},
  reportStatus: async () => {},
};

/**
 * Connects the sessions of one process (a run's and its delegate children: what `rho` does for
 * `--fleet`, and what an app embedding core's `Agent` can do the same way) to a fleet,
 * without ever making the agent wait on the database. The connection is made in the background,
 * retried while the database is away (one warning, then silence until it is back); until a session
 * is registered it runs on its file control channel and its records stay in its trace, from which
 * they are mirrored once it registers (the trace is the source of truth). Every session gets a
 * {@link CompositeControlChannel}: operators on this machine (files) and anywhere (the fleet) both
 * reach it.
 */
export class FleetLink {
  private fleet: Fleet | undefined;
  private readonly sessions = new Set<LinkedSession>();
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs: number;
  private warnedDown = false;
  private readonly warned = new Set<string>();
  private connecting: Promise<void> | undefined;
  /** Set by close(): no new connection attempts. */
  private stopping = false;

  private constructor(
    readonly config: FleetConfig,
    private readonly options: FleetLinkOptions,
  ) {
    this.retryMs = options.retryMs ?? 1_000;
  }

  /** Starts connecting to the fleet in the background and returns at once. */
  static start(config: FleetConfig, options: FleetLinkOptions = {}): FleetLink {
    const link = new FleetLink(config, options);
    link.connect();
    return link;
  }

  /**
   * Session options that link a session to the fleet: the composite control channel, the trace
   * observer that mirrors its records, and the same for every child session its tools spawn.
   */
  sessionOptions(registration: SessionRegistration, directory: string): SessionOptions {
    const linked = this.track(registration, directory);
    const inherited = { model: registration.model, profile: registration.profile, cwd: registration.cwd };
    return {
      control: this.controlOf(linked),
      traceObservers: [(record) => this.observe(linked, record)],
      childSessionOptions: (child: ChildSessionInfo): SessionOptions =>
        child.directory === undefined
          ? {}
          : this.childOptions({ id: child.id, parentId: child.parentId, ...defined(inherited) }, child.directory),
    };
  }

  /**
   * Records each session's final status, flushes the mirrors (each waits at most `timeoutMs`, so an
   * unreachable database delays the exit by that much at most; the trace keeps everything) and
   * closes the connection. Never throws.
   */
  async close(timeoutMs = 3_000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearTimeout(this.retryTimer);
    // A run shorter than the connection's set-up still reaches the fleet: a connection or a
    // registration under way is given the time left (an unreachable database is not waited for).
    const deadline = Date.now() + timeoutMs;
    if (this.fleet === undefined && this.connecting !== undefined) await within(this.connecting, deadline);
    await within(Promise.all([...this.sessions].map((linked) => linked.attaching)), deadline);
    this.closed = true;
    const closing = [...this.sessions].map(async (linked) => {
      linked.closed = true;
      await linked.attachment
        ?.close({
          ...(linked.status === undefined ? {} : { status: linked.status }),
          timeoutMs: Math.max(500, deadline - Date.now()),
        })
        .catch(() => {});
    });
    await Promise.all(closing);
    await this.fleet?.close().catch(() => {});
  }

  private childOptions(registration: SessionRegistration, directory: string): SessionOptions {
    const linked = this.track(registration, directory);
    return { control: this.controlOf(linked), traceObservers: [(record) => this.observe(linked, record)] };
  }

  private track(registration: SessionRegistration, directory: string): LinkedSession {
    const linked: LinkedSession = {
      registration: {
        ...registration,
        ...(this.options.labels === undefined ? {} : { labels: this.options.labels }),
        ...(this.options.host === undefined ? {} : { host: this.options.host }),
      },
      directory,
      attachment: undefined,
      status: undefined,
      closed: false,
    };
    this.sessions.add(linked);
    if (this.fleet !== undefined) linked.attaching = this.attach(this.fleet, linked);
    return linked;
  }

  private controlOf(linked: LinkedSession): CompositeControlChannel {
    return new CompositeControlChannel(new FileControlChannel(linked.directory), () =>
      linked.refused === true ? REFUSED : linked.attachment?.control,
    );
  }

  private observe(linked: LinkedSession, record: TraceRecord): void {
    if (record.type === 'run_end') linked.status = record.status;
    // (The mirror records the status a batch ends in, so a REPL left open after a run shows how it
    // ended; reporting it here too could say `cancelled` before the run_end record is in the fleet,
    // and a watch would stop short of it.)
    linked.attachment?.mirror.observe(record);
  }

  private connect(): void {
    if (this.stopping || this.connecting !== undefined) return;
    this.connecting = connectFleet(this.config, {
      onWarning: (warning) => this.warn(warning),
      ...(this.options.redactor === undefined ? {} : { redactor: this.options.redactor }),
    })
      .then(
        (fleet) => {
          if (this.closed) {
            void fleet.close().catch(() => {});
            return;
          }
          this.fleet = fleet;
          if (this.warnedDown) this.options.onWarning?.(`fleet: connected to ${redactUrl(this.config.url)}.`);
          // Sessions of this node that died without saying so (a crash, a reboot) are marked dead.
          void fleet.reconcile(this.options.host === undefined ? {} : { host: this.options.host }).catch(() => {});
          for (const linked of this.sessions) linked.attaching = this.attach(fleet, linked);
        },
        (error: unknown) => {
          if (this.stopping) return;
          if (!this.warnedDown) {
            this.warnedDown = true;
            this.options.onWarning?.(
              `fleet: ${error instanceof Error ? error.message : String(error)} The agent runs on without it (the local trace and control files work as always) and registers once the database answers.`,
            );
          }
          this.retryTimer = setTimeout(() => this.connect(), this.retryMs);
          this.retryTimer.unref();
          this.retryMs = Math.min(this.retryMs * 2, 15_000);
        },
      )
      .finally(() => {
        this.connecting = undefined;
      });
  }

  /**
   * Registers one session and mirrors its trace from where the fleet's copy ends: records written
   * before the registration (the database was away, or the session ran without a fleet before
   * this resume) are read back from the trace file, the rest are observed as they are appended.
   */
  private async attach(fleet: Fleet, linked: LinkedSession): Promise<void> {
    try {
      const [known] = await fleet.listSessions({ idPrefix: linked.registration.id, limit: 1 });
      const recordsBefore = known?.id === linked.registration.id ? known.records : 0;
      const tracePath = join(linked.directory, 'trace.jsonl');
      const attachment = await fleet.attachSession(linked.registration, {
        tracePath,
        recordsBefore,
        onWarning: (warning) => this.warn(warning),
      });
      // From here to the switch nothing else runs: no record can slip between the file and the observer.
      for (const record of traceRecordsAfter(tracePath, recordsBefore)) {
        if (record.type === 'run_end') linked.status = record.status;
        attachment.mirror.observe(record);
      }
      linked.attachment = attachment;
      if (linked.closed || this.closed)
        await attachment.close({ ...(linked.status === undefined ? {} : { status: linked.status }) });
    } catch (error) {
      if (this.closed || linked.closed) return;
      const cause = (error as { cause?: unknown }).cause;
      if (FleetSessionTakenError.isInstance(error) || FleetSessionTakenError.isInstance(cause)) {
        // Another process runs this session (a copied or restored session directory): this run
        // stops rather than run the same session twice, and the fleet's row and trace stay the other's.
        linked.refused = true;
        this.options.onWarning?.(
          `fleet: ${(FleetSessionTakenError.isInstance(error) ? error : (cause as Error)).message} This run stops.`,
        );
        return;
      }
      this.warn({
        code: 'database_unreachable',
        message: `session ${linked.registration.id} is not registered yet (${error instanceof Error ? error.message : String(error)}); retrying.`,
        sessionId: linked.registration.id,
      });
      const timer = setTimeout(() => {
        if (!this.stopping) linked.attaching = this.attach(fleet, linked);
      }, 2_000);
      timer.unref();
    }
  }

  /** Each kind of warning once per session; "caught up" and "reconnected" again after a new problem. */
  private warn(warning: FleetWarning): void {
    const key = `${warning.sessionId}:${warning.code}`;
    if (warning.code === 'mirror_caught_up' || warning.code === 'database_reconnected') {
      const problem = warning.code === 'mirror_caught_up' ? 'mirror_behind' : 'database_unreachable';
      if (!this.warned.delete(`${warning.sessionId}:${problem}`)) return;
    } else if (this.warned.has(key)) return;
    else this.warned.add(key);
    this.options.onWarning?.(`fleet: ${warning.message}`);
  }
}

/**
 * The records of a trace file after its first `count` lines, read by core's `TraceReader`. Line
 * n is record n, as the fleet's mirror counts them; a torn line (an earlier crash) is counted and
 * skipped.
 */
function traceRecordsAfter(path: string, count: number): TraceRecord[] {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return [];
  }
  const records: TraceRecord[] = [];
  TraceReader.read(bytes, {
    record: (record, line) => {
      if (line > count) records.push(record as unknown as TraceRecord);
    },
  });
  return records;
}

/** Waits for `promise` until `deadline` (ms since the epoch), whichever comes first; never throws. */
async function within(promise: Promise<unknown>, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise.catch(() => {}),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
}

function defined<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as Partial<T>;
}
