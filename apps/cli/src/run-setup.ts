import { existsSync, rmdirSync, rmSync } from 'node:fs';
import { basename, join, posix } from 'node:path';
import type { ApprovalAvailability } from '@rho/agent';
import { Agent, backendAccess, defaultBackendRegistry } from '@rho/agent';
import { rhoHome, SessionStore } from '@rho/core';
import { preloadOpenAI, readSessionMeta, resolveSessionWithRhoAgent, SessionLock } from '@rho/core/internal';
import {
  readSessionSettings,
  redactSettings,
  resolveSettings,
  writeSessionSecrets,
  writeSessionSettings,
} from '@rho/core/settings';
import { closeOnExit } from './exit-cleanup.js';
import { loadDotenv } from './dotenv.js';
import { UsageError } from './exit-codes.js';
import { startFleetLink } from './fleet/run-fleet.js';
import { loadGgufClient } from './gguf-client.js';
import { startOtel } from './otel.js';
import { findProjectInstructions } from './project-instructions.js';
import type { RunSetup, SetupArguments, SetupHooks } from './run-types.js';
import { openRunSession } from './run-session.js';
import type { RunWorkspace } from './run-workspace.js';
import { openRunWorkspace } from './run-workspace.js';
import { serverModel } from './server-model.js';
import { allSections, runSections, settingsOverrides } from './settings.js';
import { resolveSystemPrompt } from './system-prompt.js';
import { buildToolset } from './tools.js';
import { REMOTE_BACKEND } from './workspace-settings.js';

export type { RunSetup, SetupArguments, SetupHooks } from './run-types.js';

/** What a setup holds while it is made, released if it fails. */
interface Held {
  lock?: SessionLock;
  closeBackend?: () => Promise<void>;
  /** A new session's directory, made before its tools start (removed if the set-up fails before the run). */
  created?: string;
  /** Released in this order when the set-up fails after starting them. */
  started: (() => Promise<unknown> | undefined)[];
  /** A new session's isolated workspace, removed with it when the set-up fails. */
  workspace?: RunWorkspace;
  /** The sessions directory, when this set-up made it (removed again if left empty). */
  madeBase?: string;
}

/** Settings warnings already shown by this process (a REPL sets up again on /resume). */
const shownWarnings = new Set<string>();

/** Resolves the run's settings once (see `@rho/core/settings`) and builds the agent and session from them. */
export async function prepareRun(
  argv: SetupArguments,
  env: NodeJS.ProcessEnv,
  hooks: SetupHooks = {},
): Promise<RunSetup> {
  const held: Held = { started: [] };
  try {
    return await prepareLockedRun(argv, env, hooks, held);
  } catch (error) {
    // A setup that fails after taking the session's lock gives it back (a REPL stays open), and
    // one that fails after making the backend releases it.
    for (const stop of held.started.reverse()) await stop();
    held.lock?.release();
    await held.closeBackend?.();
    // A new session whose set-up failed before its run wrote anything leaves nothing behind: not
    // its directory, not its workspace.
    if (held.created !== undefined && !existsSync(join(held.created, 'trace.jsonl'))) {
      await held.workspace?.drop().catch(() => {});
      rmSync(held.created, { recursive: true, force: true });
      // A refused first run leaves no empty sessions directory either (only an empty one goes).
      if (held.madeBase !== undefined)
        try {
          rmdirSync(held.madeBase);
        } catch {
          // Another session is in it now.
        }
    }
    throw error;
  }
}

async function prepareLockedRun(
  argv: SetupArguments,
  env: NodeJS.ProcessEnv,
  hooks: SetupHooks,
  held: Held,
): Promise<RunSetup> {
  loadDotenv(env);
  const home = rhoHome(env);
  const store = new SessionStore(join(home, 'sessions'));
  // This process is the session's only writer until it exits: a resumed session's lock is taken
  // first (a refused resume does nothing else) and before the trace is replayed (so the replayed
  // history is the whole history); close() releases it, and so does any exit.
  let resumedDirectory: string | undefined;
  if (argv.resume !== undefined) {
    // Also finds sessions of the Python rho-agent in ~/.config/rho-agent/sessions.
    resumedDirectory = resolveSessionWithRhoAgent(store, argv.resume).directory;
    held.lock = SessionLock.acquire(resumedDirectory);
  }
  // With the secrets the first run kept out of config.yaml put back (secrets.json).
  const resumed = resumedDirectory === undefined ? undefined : readSessionSettings(resumedDirectory);
  // The flags pass here once, into the one resolution of the run's settings.
  const resolved = await resolveSettings({
    sections: runSections,
    knownSections: allSections,
    home,
    env,
    overrides: settingsOverrides(argv),
    ...(resumed !== undefined
      ? { resumed }
      : argv.config !== undefined && resumedDirectory === undefined
        ? { agentConfig: argv.config }
        : {}),
  });
  for (const warning of resolved.warnings) {
    if (shownWarnings.has(warning)) continue;
    shownWarnings.add(warning);
    hooks.onWarning?.(warning);
  }
  const { settings } = resolved;
  // A --base-url run without -m runs the server's model, not the default's name (and price).
  const found = settings.model.unnamed ? await serverModel(settings.model.baseURL!, settings.model.apiKey) : undefined;
  if (found !== undefined && 'choices' in found)
    throw new UsageError({
      message: `No model is named, and ${settings.model.baseURL!} serves ${found.count} (${found.choices.join(', ')}${found.count > found.choices.length ? ', ...' : ''}): choose one with -m (or RHO_MODEL, or model: in the config).`,
    });
  const model = found?.model ?? settings.model.model;
  if (model !== settings.model.model) resolved.saved.model = model;
  const { profile } = settings.profile;
  // An empty OPENAI_BASE_URL means unset (the OpenAI SDK would otherwise take '' for a host).
  if (env.OPENAI_BASE_URL !== undefined && env.OPENAI_BASE_URL.trim() === '') {
    delete env.OPENAI_BASE_URL;
    delete process.env.OPENAI_BASE_URL;
  }
  if (settings.model.gguf === undefined && settings.model.baseURL === undefined && settings.model.apiKey === undefined)
    throw new UsageError({
      message:
        'Missing API key. Set OPENAI_API_KEY, or pass --base-url (or set OPENAI_BASE_URL) to an OpenAI-compatible endpoint that needs no key.',
    });
  // The SDK loads while the profile, the tools and the session are set up, not in the first request.
  if (settings.model.gguf === undefined) void preloadOpenAI();

  // A new session exists (its directory, meta.json, its lock) before its workspace and its tools:
  // an isolated workspace is named after it, `rho ps` lists it and `rho cancel` reaches it while
  // MCP servers start, which may take up to their startup_timeout. Its config.yaml keeps no
  // secret; secrets.json keeps what redaction took out (the prompt file's variables are added
  // once the prompt is read, below).
  let created: { id: string; directory: string } | undefined;
  if (resumedDirectory === undefined) {
    const saved = redactSettings(resolved.saved, resolved.redactor);
    if (!existsSync(store.baseDir)) held.madeBase = store.baseDir;
    created = store.create({
      config: saved.document,
      model,
      profile: settings.profile.name,
      workingDir: settings.workingDir.workingDir,
      ...(settings.queue.task === undefined ? {} : { task: settings.queue.task }),
      // A queued task's (or an MCP client's) labels, then --label over them, as the fleet gets them.
      ...(settings.queue.labels === undefined && settings.fleet.labels === undefined
        ? {}
        : { labels: { ...settings.queue.labels, ...settings.fleet.labels } }),
    });
    held.created = created.directory;
    held.lock = SessionLock.acquire(created.directory);
    writeSessionSecrets(created.directory, saved.secrets);
  }
  const sessionDir = created?.directory ?? resumedDirectory!;
  const sessionId = created?.id ?? readSessionMeta(sessionDir)?.id ?? basename(sessionDir);
  // A Daytona sandbox is a machine of its own: an isolated run's workspace is a local copy of
  // what goes there (nothing, without upload: true), uploaded from it, and its changes come back
  // to it after each run; in place, nothing of this machine changes and nothing comes back.
  const remote = settings.backend.name === REMOTE_BACKEND;
  const remoteWorkspace =
    remote && settings.workspace.mode === 'isolated'
      ? { backend: REMOTE_BACKEND, empty: settings.backend.options['upload'] !== true }
      : undefined;
  // The run's workspace: an isolated one is made (or, resumed, found again) before the backend,
  // which works in it; an in-place run with checkpoints takes checkpoint 0 now.
  const workspace = await openRunWorkspace({
    settings: remote ? { ...settings.workspace, checkpoints: false } : settings.workspace,
    workingDir: settings.workingDir.workingDir,
    home,
    sessionId,
    sessionDir,
    resumed: resumedDirectory !== undefined,
    ...(remoteWorkspace === undefined ? {} : { remote: remoteWorkspace }),
    ...(hooks.onWarning === undefined ? {} : { onWarning: hooks.onWarning }),
    ...(hooks.onNotice === undefined ? {} : { onNotice: hooks.onNotice }),
  });
  if (created !== undefined) held.workspace = workspace;
  // The agent's working directory: the workspace's for an isolated run.
  const workingDir = workspace?.workingDir ?? settings.workingDir.workingDir;

  // Tools never run anywhere but where the user was told: a backend that is unknown or cannot
  // start here stops the run before the first model call (exit 2), never falls back to this machine.
  const backend = await defaultBackendRegistry().create(settings.backend.name, {
    workingDir,
    // A remote workspace goes up whole (empty, or as the last run left it), into the directory
    // named after the user's.
    options:
      remoteWorkspace === undefined
        ? settings.backend.options
        : {
            working_dir: posix.join('/home/daytona', basename(settings.workingDir.workingDir) || 'work'),
            ...settings.backend.options,
            upload: true,
          },
    access: backendAccess(profile),
    env,
    origin: settings.backend.origin,
  });
  if (
    settings.backend.name === 'daytona' &&
    settings.backend.options['keep_sandbox'] === true &&
    'sandboxId' in backend
  )
    // It costs money while it runs: say which one is left behind.
    hooks.onWarning?.(
      `the Daytona sandbox ${String(backend.sandboxId)} is kept when rho exits (keep_sandbox); it stops after 15 idle minutes and stays until you delete it.`,
    );
  if (remoteWorkspace !== undefined) workspace?.bindRemote(backend);
  const closeBackend = async () => {
    await backend.close?.();
  };
  held.closeBackend = closeBackend;
  // Also on the exits that skip `finally` (a second Ctrl+C, SIGTERM in the REPL).
  const forgetBackend = closeOnExit(closeBackend);

  // A remote backend works in a directory of its own (the prompt's working_dir names it).
  const prompted = resolveSystemPrompt(settings.prompt, {
    home,
    workingDir: backend.workingDir ?? workingDir,
    profile,
  });
  // The prompt file's variables are kept with the new session, for a resume.
  if (created !== undefined && prompted.vars !== undefined) {
    const saved = redactSettings({ ...resolved.saved, vars: prompted.vars }, resolved.redactor);
    writeSessionSettings(created.directory, saved.document);
    writeSessionSecrets(created.directory, saved.secrets);
  }
  // Per-project instructions (AGENTS.md, .rho/instructions.md) follow the system prompt.
  const instructions = findProjectInstructions(workingDir);
  // The approvals the run command will be able to get: an approver on a terminal, --auto-approve,
  // an answer from elsewhere (rho approve, the dashboard, a fleet node) while the call waits, or
  // none (`when_unattended: withhold`: such tools are not offered). A person at a terminal
  // answers on stdin and reads on stderr; the answer may be piped.
  const approvals: ApprovalAvailability =
    hooks.approvals ??
    (settings.approvals.autoApprove
      ? 'auto'
      : (process.stdin.isTTY === true && process.stderr.isTTY === true) || settings.approvals.unattended === 'wait'
        ? 'ask'
        : 'none');
  // While the tools start, a cancel of the new session (`rho cancel`, its cancel file) stops the
  // wait for MCP servers at once; the run then ends cancelled before its first model call.
  const starting = new AbortController();
  const cancelWatch =
    created === undefined
      ? undefined
      : setInterval(() => {
          if (existsSync(join(created.directory, 'cancel'))) starting.abort();
        }, 200);
  const toolset = await buildToolset({
    profile,
    signal: starting.signal,
    workingDir,
    backend,
    home,
    env,
    toolPackages: settings.toolPackages.packages,
    approvals,
    // Tools withheld for want of an approver are named by the caller in one line with what to do
    // (run-command's notice, from `withheld`), not by the toolset's generic warning.
    onWithheld: () => {},
    ...(hooks.onWarning === undefined
      ? {}
      : {
          onWarning: hooks.onWarning,
          onDatabaseWarning: (warning: { message: string }) => hooks.onWarning?.(warning.message),
        }),
    databases: settings.databases.aliases,
    mcpServers: settings.mcp.servers,
  }).finally(() => clearInterval(cancelWatch));
  held.started.push(() => toolset.close());
  // Every secret rho knows (collected once, with the settings), kept from the model, the trace and
  // what leaves the machine (the fleet's tables, spans) by one redactor.
  const { redactor } = resolved;
  const localClient = settings.model.gguf === undefined ? undefined : await loadGgufClient(settings.model.gguf);
  held.started.push(() => localClient?.close());
  // The profile's tools and its approval policy (the one decision of which calls need approval).
  const agent = new Agent({
    toolset,
    redactor,
    systemPrompt: `${prompted.systemPrompt}${instructions.text}`,
    model,
    budgets: settings.budgets,
    compaction: settings.compaction,
    ...(localClient === undefined ? {} : { client: localClient }),
    clientOptions: settings.model.clientOptions,
  });

  const explicit =
    typeof argv.p === 'string' ? argv.p : Array.isArray(argv.prompt) ? argv.prompt.join(' ') : argv.prompt;
  const prompt = nonEmpty(explicit) ?? (resumedDirectory === undefined ? prompted.initialPrompt : undefined);
  // A fleet (--fleet, RHO_FLEET_URL, fleet: in the agent config or $RHO_HOME/config.yaml) is
  // loaded only when one is configured: without it nothing below touches @rho/fleet or postgres.
  const { fleet: fleetSettings } = settings;
  const fleet =
    fleetSettings.sources === undefined
      ? undefined
      : await startFleetLink(
          fleetSettings.sources,
          { userConfig: fleetSettings.userConfig, agentConfig: fleetSettings.agentConfig },
          // A queued task's labels (RHO_TASK_LABELS, set by rho worker), then --label over them.
          settings.queue.labels === undefined && fleetSettings.labels === undefined
            ? undefined
            : { ...settings.queue.labels, ...fleetSettings.labels },
          hooks,
          redactor,
        );
  held.started.push(() => fleet?.close(0));

  // Hooks (hooks: of $RHO_HOME/config.yaml and the agent config); @rho/hooks loads only with some.
  const sessionHooks = settings.hooks.any
    ? (await import('@rho/hooks')).createSessionHooks(settings.hooks.hooks, { env })
    : undefined;
  const lock = held.lock!;
  // The checkpoint of a turn is taken before the next turn's first tool call runs.
  const toolHooks = workspace?.toolHooks(sessionHooks?.toolHooks) ?? sessionHooks?.toolHooks;
  const session = await openRunSession({
    agent,
    store,
    lock,
    fleet,
    lease: settings.queue.lease,
    listed: { model, profile: settings.profile.name, cwd: settings.workingDir.workingDir },
    ...(resumedDirectory !== undefined ? { resumedDirectory } : { created: created! }),
    ...(prompt === undefined ? {} : { prompt }),
    ...(toolHooks === undefined ? {} : { toolHooks }),
    ...(hooks.onWarning === undefined ? {} : { onWarning: hooks.onWarning }),
    approvals: {
      unattended: settings.approvals.unattended,
      timeoutMs: settings.approvals.timeoutMs,
      onTimeout: settings.approvals.onTimeout,
      // A queued task's calls wait no later than its worker says (a little before its deadline).
      ...(settings.queue.approvalDeadline === undefined ? {} : { deadline: settings.queue.approvalDeadline }),
    },
  });
  sessionHooks?.attach(session);
  workspace?.attach(session);

  const tracing =
    settings.otel === undefined
      ? undefined
      : await startOtel(settings.otel, env, {
          redactor,
          ...(hooks.onWarning === undefined ? {} : { onWarning: hooks.onWarning }),
        });
  tracing?.instrument(session, { captureContent: settings.otel!.content });
  const close = async () => {
    await workspace?.settled();
    // The notification hooks of the run's end finish (each by its timeout) while the session is
    // still this process's: their runs are recorded in its trace.
    await sessionHooks?.drain();
    lock.release();
    // Spans and the fleet's mirror of every way the run ended (answer, error, Ctrl+C, SIGTERM) go
    // out here, each within a bounded time, side by side.
    await Promise.all([tracing?.shutdown(), fleet?.close()]);
    await localClient?.close();
    await agent.close();
    forgetBackend();
    await closeBackend();
  };
  return {
    agent,
    session,
    store,
    profile,
    settings,
    model,
    workingDir,
    prompt,
    resumed: resumedDirectory !== undefined,
    home,
    instructionFiles: instructions.files,
    withheld: toolset.withheld,
    backend,
    ...(workspace === undefined ? {} : { workspace }),
    close,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
