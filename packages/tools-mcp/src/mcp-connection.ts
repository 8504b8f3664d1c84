import { RhoError } from '@rho/core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, ReadResourceResult, Resource, Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_MCP_STARTUP_TIMEOUT_SECONDS } from './server-config.js';
import type { McpServerConfig } from './server-config.js';

/** A failure to reach, start or speak to an MCP server; the message names the server and what to check. */
export class McpServerError extends RhoError {
  /** The configured server name. */
  readonly server: string;
  constructor(server: string, message: string, options: { cause?: unknown } = {}) {
    super('mcp_server_error', { message, ...(options.cause === undefined ? {} : { cause: options.cause }) });
    this.name = 'McpServerError';
    this.server = server;
  }
}

/** Options of {@link McpConnection}. */
export interface McpConnectionOptions {
  /** Working directory of stdio servers without their own `cwd`. */
  workingDir?: string;
  /** Delay before the first restart after a crash, in milliseconds; doubles per crash in a row. Default 250. */
  restartBaseDelayMs?: number;
  /** Longest delay between restarts, in milliseconds. Default 30 000. */
  restartMaxDelayMs?: number;
  /** Crashes in a row after which calls fail without a restart until `close()`. Default 5. */
  maxConsecutiveCrashes?: number;
  /** The client name and version announced to servers. */
  clientInfo?: { name: string; version: string };
}

interface Live {
  client: Client;
  transport: Transport;
  /** Set once the connection closed (the server exited or the stream broke). */
  closed: boolean;
  /** Set when the server sent a reply that is not JSON-RPC: the connection was closed for it. */
  garbage?: string;
}

const STDERR_KEPT = 4000;

/**
 * One MCP server: started on first use (the SDK loads then too), restarted after a crash with
 * exponential backoff, closed with `close()`. A call in flight when the server dies fails (it may
 * have had effects, so it is not repeated); the next call starts the server again.
 */
export class McpConnection {
  readonly config: McpServerConfig;
  private readonly options: McpConnectionOptions;
  private live: Live | undefined;
  private starting: Promise<Live> | undefined;
  private crashes = 0;
  private lastCrashAt = 0;
  private closing = false;
  private stderrTail = '';
  private cachedTools: McpTool[] | undefined;
  /** Times the server was started (the first start included). */
  starts = 0;

  constructor(config: McpServerConfig, options: McpConnectionOptions = {}) {
    this.config = config;
    this.options = options;
  }

  /** The process id of a running stdio server (for diagnostics and tests), if any. */
  get pid(): number | undefined {
    const transport = this.live?.transport as { pid?: number | null } | undefined;
    return transport?.pid ?? undefined;
  }

  /** The end of what a stdio server wrote to its standard error, for error messages. */
  get stderr(): string {
    return this.stderrTail;
  }

  /** The server's tools (every page), listed once per connection. */
  async listTools(signal?: AbortSignal): Promise<McpTool[]> {
    if (this.cachedTools !== undefined && !this.closing) return this.cachedTools;
    const live = await this.connect(signal);
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    try {
      do {
        // Listing the tools is part of starting the server: it has the start-up timeout.
        const page = await live.client.listTools(cursor === undefined ? {} : { cursor }, {
          ...(signal === undefined ? {} : { signal }),
          timeout: this.startupTimeoutMs,
        });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new McpServerError(
        this.config.name,
        `MCP server ${this.config.name} did not list its tools: ${this.failureText(live, error)}${this.exitNote()}. Check mcp_servers.${this.config.name}.`,
        { cause: error },
      );
    }
    this.cachedTools = tools;
    return tools;
  }

  /** The server's resources (every page), or an empty list when it offers none (no `resources` capability). */
  async listResources(signal?: AbortSignal): Promise<Resource[]> {
    const live = await this.connect(signal);
    if (live.client.getServerCapabilities()?.resources === undefined) return [];
    const resources: Resource[] = [];
    let cursor: string | undefined;
    do {
      const page = await live.client.listResources(cursor === undefined ? {} : { cursor }, {
        ...(signal === undefined ? {} : { signal }),
        timeout: this.config.timeoutMs,
      });
      resources.push(...page.resources);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return resources;
  }

  /** Reads one resource by URI. */
  async readResource(uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
    const live = await this.connect(signal);
    return live.client.readResource(
      { uri },
      { ...(signal === undefined ? {} : { signal }), timeout: this.config.timeoutMs },
    );
  }

  /**
   * Calls a tool. The signal reaches the server as a `notifications/cancelled`; a crash during
   * the call rejects with an {@link McpServerError}.
   */
  async callTool(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> {
    const live = await this.connect(signal);
    // One signal per call: the SDK listens on the signal it is given and a run's signal outlives
    // many calls, so listeners would pile up on it (a leak, and Node's MaxListeners warning).
    const call = new AbortController();
    const forward = () => call.abort(signal?.reason);
    if (signal?.aborted) forward();
    else signal?.addEventListener('abort', forward, { once: true });
    try {
      const result = (await live.client.callTool({ name, arguments: args }, undefined, {
        signal: call.signal,
        timeout: this.config.timeoutMs,
        // Long calls that report progress are not cut off by the timeout.
        resetTimeoutOnProgress: true,
        onprogress: () => {},
      })) as CallToolResult;
      this.crashes = 0;
      return result;
    } catch (error) {
      if (signal?.aborted) throw error;
      if (!live.closed && this.config.transport === 'http' && isTransportFailure(error)) {
        // The HTTP server went away or forgot the session (a restart): there is no process to
        // watch, so the failed request is the sign. The next call connects again, with backoff.
        live.closed = true;
        if (this.live === live) this.live = undefined;
        this.crashes += 1;
        this.lastCrashAt = Date.now();
        this.cachedTools = undefined;
        void live.client.close().catch(() => {});
        throw new McpServerError(
          this.config.name,
          `MCP server ${this.config.name} (${this.config.url}) failed during the call of ${name}: ${error instanceof Error ? error.message : String(error)}; rho connects again on the next call.`,
          { cause: error },
        );
      }
      if (live.garbage !== undefined) {
        throw new McpServerError(
          this.config.name,
          `MCP server ${this.config.name} answered the call of ${name} with ${live.garbage}; the connection was closed, and the server is restarted on the next call.`,
          { cause: error },
        );
      }
      if (live.closed) {
        throw new McpServerError(
          this.config.name,
          `MCP server ${this.config.name} stopped during the call of ${name}${this.exitNote()}; it is restarted on the next call.`,
          { cause: error },
        );
      }
      throw error;
    } finally {
      signal?.removeEventListener('abort', forward);
    }
  }

  /** Stops the server (a stdio process is ended, an HTTP session is terminated); later calls fail. */
  async close(): Promise<void> {
    this.closing = true;
    this.cachedTools = undefined;
    const live = this.live ?? (await this.starting?.catch(() => undefined));
    this.live = undefined;
    if (live === undefined) return;
    const transport = live.transport as { terminateSession?: () => Promise<void> };
    if (typeof transport.terminateSession === 'function') await transport.terminateSession().catch(() => {});
    await live.client.close().catch(() => {});
  }

  /** How long starting the server may take, in milliseconds. */
  private get startupTimeoutMs(): number {
    return this.config.startupTimeoutMs ?? DEFAULT_MCP_STARTUP_TIMEOUT_SECONDS * 1000;
  }

  /** Why a start-up request failed, for people: a reply that was not JSON-RPC, a timeout, or the error. */
  private failureText(live: Live, error: unknown): string {
    if (live.garbage !== undefined) return `it answered with ${live.garbage}`;
    const code = (error as { code?: unknown } | null)?.code;
    // The SDK's request timeout (ErrorCode.RequestTimeout).
    if (code === -32001)
      return `no answer within ${this.startupTimeoutMs / 1000} s (startup_timeout; raise it in mcp_servers.${this.config.name} if the server is slow to start)`;
    return error instanceof Error ? error.message : String(error);
  }

  private exitNote(): string {
    const tail = this.stderrTail.trim().split('\n').slice(-3).join(' | ');
    return tail === '' ? '' : ` (its last words: ${tail.slice(-400)})`;
  }

  private async connect(signal?: AbortSignal): Promise<Live> {
    if (this.closing)
      throw new McpServerError(
        this.config.name,
        `MCP server ${this.config.name} was closed with its session; start a new session to use it.`,
      );
    if (this.live !== undefined && !this.live.closed) return this.live;
    this.starting ??= this.start(signal).finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async start(signal?: AbortSignal): Promise<Live> {
    const max = this.options.maxConsecutiveCrashes ?? 5;
    if (this.crashes >= max) {
      throw new McpServerError(
        this.config.name,
        `MCP server ${this.config.name} crashed ${this.crashes} times in a row${this.exitNote()}; rho no longer restarts it in this session. Check the server's command and settings (mcp_servers.${this.config.name}).`,
      );
    }
    if (this.crashes > 0) {
      const delay = Math.min(
        (this.options.restartBaseDelayMs ?? 250) * 2 ** (this.crashes - 1),
        this.options.restartMaxDelayMs ?? 30_000,
      );
      const wait = this.lastCrashAt + delay - Date.now();
      if (wait > 0) await sleep(wait, signal);
    }
    const [{ Client }, transport] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      this.createTransport(),
    ]);
    const client = new Client(this.options.clientInfo ?? { name: 'rho', version: '0.1.0' });
    const live: Live = { client, transport, closed: false };
    client.onclose = () => {
      live.closed = true;
      if (this.live === live) this.live = undefined;
      if (!this.closing) {
        this.crashes += 1;
        this.lastCrashAt = Date.now();
        this.cachedTools = undefined;
      }
    };
    // Transport errors also surface as rejected requests or a close. A reply that is not JSON-RPC
    // (JSON of another shape, or a line that starts as JSON and does not parse) would otherwise
    // leave its request waiting for the whole timeout: the connection is closed at once, which
    // fails every request in flight, and the failure says what arrived.
    client.onerror = (error: Error) => {
      const what = notJsonRpc(error);
      if (what === undefined || live.garbage !== undefined) return;
      live.garbage = what;
      void client.close().catch(() => {});
    };
    this.starts += 1;
    try {
      await client.connect(transport, { ...(signal === undefined ? {} : { signal }), timeout: this.startupTimeoutMs });
    } catch (error) {
      await client.close().catch(() => {});
      this.crashes += 1;
      this.lastCrashAt = Date.now();
      const how =
        this.config.transport === 'stdio'
          ? `${this.config.command} ${this.config.args.join(' ')}`.trim()
          : this.config.url;
      throw new McpServerError(
        this.config.name,
        `MCP server ${this.config.name} could not be started (${how}): ${this.failureText(live, error)}${this.exitNote()}. Check mcp_servers.${this.config.name}.`,
        { cause: error },
      );
    }
    if (this.closing) {
      await client.close().catch(() => {});
      throw new McpServerError(this.config.name, `MCP server ${this.config.name} was closed with its session.`);
    }
    this.live = live;
    return live;
  }

  private async createTransport(): Promise<Transport> {
    const config = this.config;
    if (config.transport === 'http') {
      const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
      return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
    }
    const { StdioClientTransport, getDefaultEnvironment } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const cwd = config.cwd ?? this.options.workingDir;
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args,
      // Only the SDK's safe defaults (PATH, HOME, ...) and what the config names: rho's own
      // environment (API keys) is not handed to every server.
      env: { ...getDefaultEnvironment(), ...config.env },
      ...(cwd === undefined ? {} : { cwd }),
      stderr: 'pipe',
    });
    // Kept for error messages, never printed (library code); reading it also keeps the pipe from filling.
    transport.stderr?.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_KEPT);
    });
    return transport;
  }
}

/**
 * What a transport error says arrived, when it is a reply that is not JSON-RPC: JSON of another
 * shape (the SDK's schema check failed), a line that starts like JSON and does not parse, or one
 * cut short (an empty line reads the same: stdout is the protocol's channel, where servers must
 * write nothing else). A line of plain text (a server's log line on stdout) is not counted: the
 * SDK skips it as before.
 */
function notJsonRpc(error: Error): string | undefined {
  if (error.name === 'ZodError' || Array.isArray((error as { issues?: unknown }).issues)) {
    return 'a reply that is not JSON-RPC (JSON of another shape)';
  }
  if (error instanceof SyntaxError) {
    // Node quotes the start of the text: `Unexpected token 'a', "a log line"... is not valid JSON`.
    const quoted = /"([\s\S]*?)"(?:\.\.\.)? is not valid JSON/.exec(error.message)?.[1];
    // No quoted text: the input ended inside a value (a reply cut short).
    if (quoted === undefined || /^\s*[[{]/.test(quoted)) {
      return `a reply that is not JSON-RPC (${error.message.slice(0, 200)})`;
    }
  }
  return undefined;
}

/** Whether an error is the transport's (no answer, a broken stream, an HTTP status) rather than a JSON-RPC error the server sent. */
function isTransportFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  // McpError carries a numeric JSON-RPC code; the request timeout (-32001) is not a failure of the server.
  const code = (error as { code?: unknown }).code;
  if (error.name === 'McpError' || (typeof code === 'number' && code < 0)) return false;
  return true;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
