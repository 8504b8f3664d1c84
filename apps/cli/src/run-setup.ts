import { existsSync, rmSync, statSync } from 'node:fs';
import { homedir, platform } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import type { ApprovalAvailability } from '@rho/agent';
import { Agent, backendAccess, defaultBackendName, defaultBackendRegistry } from '@rho/agent';
import type { Budgets, CompactionOptions, ExecutionBackend, Session, SessionOptions } from '@rho/core';
import type { AgentConfig } from '@rho/core/internal';
import { rhoHome, SessionStore } from '@rho/core';
import {
  FileControlChannel,
  readSessionMeta,
  resolveSessionWithRhoAgent,
  SessionLock,
  loadAgentConfig,
  loadUserConfig,
  parseAgentConfig,
  preloadOpenAI,
  unknownAgentConfigKeys,
} from '@rho/core/internal';
import { parseMcpServerSources } from '@rho/tools-mcp';
import type { PermissionProfile } from '@rho/permissions';
import { loadProfile } from '@rho/permissions';
import { defaultSystemPrompt } from './default-prompt.js';
import { closeOnExit } from './exit-cleanup.js';
import { loadDotenv } from './dotenv.js';
import { UsageError } from './exit-codes.js';
import {
  checkBaseUrl,
  checkChoice,
  checkPositiveInteger,
  checkPositiveNumber,
  checkVars,
  REASONING_EFFORTS,
} from './input-checks.js';
import { fleetSources } from './fleet/fleet-source.js';
import { fileChannelFor, parseLabels, startFleetLink } from './fleet/run-fleet.js';
import { LeaseGuardChannel, taskLease } from './lease-guard.js';
import { knownSecretsRedactor } from './known-secrets.js';
import { loadSessionConfig, redactSessionConfig, writeSessionSecrets } from './session-secrets.js';
import { otelSettings, startOtel } from './otel.js';
import { findProjectInstructions } from './project-instructions.js';
import { loadPromptFile, loadVarsFile, parseVars, preparePrompt } from './prompt-files.js';
import type { ToolPackageReference } from './tool-packages.js';
import { buildToolset } from './tools.js';

/** Command-line options that shape an agent and its session. */
export interface SetupArguments {
  prompt?: string | string[];
  p?: string;
  model?: string;
  baseUrl?: string;
  profile?: string;
  workingDir?: string;
  systemPrompt?: string;
  /** `--var key=value`: one item, or several when the flag is repeated. */
  var?: string | string[];
  varsFile?: string;
  config?: string;
  resume?: string;
  reasoningEffort?: string;
  autoApprove: boolean;
  /** As typed (validated here, so the message can say what is wrong). */
  maxTurns?: number | string;
  maxTokens?: number | string;
  maxCost?: number | string;
  dbConfig?: string;
  /** `--tool-package` (repeatable): package names or paths, added to the config's `tool_packages`. */
  toolPackage?: string[];
  /** Seconds, as typed (validated here, so the message can say what is wrong). */
  firstByteTimeout?: string;
  idleTimeout?: string;
  /** `--max-answer-time` (seconds) and `--max-answer-size` (characters), as typed. */
  maxAnswerTime?: string;
  maxAnswerSize?: string;
  maxRetries?: string;
  /** `--context-window`: tokens, as typed. */
  contextWindow?: string;
  /** `--backend`: where the file and shell tools run (local, sandbox, daytona). */
  backend?: string;
  /** `--dockerfile`: the Daytona sandbox is built from this Dockerfile (implies daytona). */
  dockerfile?: string;
  /** `--snapshot`: the Daytona sandbox is created from this snapshot (implies daytona). */
  snapshot?: string;
  /** `--keep-sandbox`: the Daytona sandbox is not deleted on exit. */
  keepSandbox?: boolean;
  /** `--fleet URL`: register the session in this fleet (an empty value: no fleet for this run). */
  fleet?: string;
  /** `--label key=value` (repeatable): labels of the session in the fleet. */
  label?: string[];
  /** `--otel [ENDPOINT]`: '' when given without an endpoint. */
  otel?: string;
  /** `--otel-content`: export message content too. */
  otelContent?: boolean;
}

/** Everything a run needs, resolved from flags, files and the environment. */
export interface RunSetup {
  agent: Agent;
  session: Session;
  store: SessionStore;
  profile: PermissionProfile;
  config: AgentConfig;
  model: string;
  /** The task to run: `--prompt`, the positional prompt, or the prompt file's `initial_prompt`. */
  prompt: string | undefined;
  resumed: boolean;
  home: string;
  /** AGENTS.md and .rho/instructions.md files added to the system prompt, outermost first. */
  instructionFiles: string[];
  /** Tools not offered because nobody can approve their calls in this run (the caller says so). */
  withheld: readonly { name: string; reason: string }[];
  /** Where the file and shell tools run. */
  backend: ExecutionBackend;
  /** Releases what the tools hold (database connections) and what the backend holds (its container). */
  close(): Promise<void>;
}

/** How {@link prepareRun} reports and what it is told about the run. */
export interface SetupHooks {
  /** Told what the user should know before the run (printed by the caller). */
  onWarning?: (message: string) => void;
  /**
   * Whether approvals can be obtained in this run. Default: `auto` with `--auto-approve` (or
   * `auto_approve: true`), `ask` on an interactive terminal, otherwise `none`, where tools whose
   * every call needs approval are not offered.
   */
  approvals?: ApprovalAvailability;
}

/** Resolves flags (which win), the agent config or resumed session, and the environment. */
export async function prepareRun(
  argv: SetupArguments,
  env: NodeJS.ProcessEnv,
  hooks: SetupHooks = {},
): Promise<RunSetup> {
  const held: Held = {};
  try {
    return await prepareLockedRun(argv, env, hooks, held);
  } catch (error) {
    // A setup that fails after taking the session's lock gives it back (a REPL stays open), and
    // one that fails after making the backend releases it.
    held.lock?.release();
    await held.closeBackend?.();
    // A new session whose set-up failed before its run wrote anything leaves nothing behind.
    if (held.created !== undefined && !existsSync(join(held.created, 'trace.jsonl')))
      rmSync(held.created, { recursive: true, force: true });
    throw error;
  }
}

/** What a setup holds while it is made, released if it fails. */
interface Held {
  lock?: SessionLock;
  closeBackend?: () => Promise<void>;
  /** A new session's directory, made before its tools start (removed if the set-up fails before the run). */
  created?: string;
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

  let config: AgentConfig = { vars: {}, budgets: {}, extras: {} };
  let resumedDirectory: string | undefined;
  /** The directory of the agent config file (a resumed session's own directory), where its tool packages resolve from. */
  let configDir: string | undefined;
  let configOrigin = 'agent config';
  // This process is the session's only writer until it exits: a resumed session's lock is taken
  // first (a refused resume does nothing else) and before the trace is replayed (so the replayed
  // history is the whole history); close() releases it, and so does any exit.
  let lock: SessionLock | undefined;
  if (argv.resume !== undefined) {
    // Also finds sessions of the Python rho-agent in ~/.config/rho-agent/sessions.
    resumedDirectory = resolveSessionWithRhoAgent(store, argv.resume).directory;
    lock = SessionLock.acquire(resumedDirectory);
    held.lock = lock;
    const saved = join(resumedDirectory, 'config.yaml');
    // With the secrets the first run kept out of config.yaml put back (secrets.json).
    if (existsSync(saved)) config = loadSessionConfig(resumedDirectory);
    configDir = resumedDirectory;
    configOrigin = saved;
  } else if (argv.config !== undefined) {
    config = loadAgentConfig(resolve(argv.config));
    configDir = dirname(resolve(argv.config));
    configOrigin = resolve(argv.config);
  }
  for (const { key, suggestion } of unknownAgentConfigKeys(config)) {
    hooks.onWarning?.(
      `${configOrigin}: unknown key '${key}' is ignored${suggestion === undefined ? '' : ` (did you mean '${suggestion}'?)`}.`,
    );
  }
  // $RHO_HOME/config.yaml is read on every run and resume, never copied into the session's config.yaml.
  const userConfig = loadUserConfig(home);
  for (const warning of userConfig.warnings) hooks.onWarning?.(warning);
  // OpenTelemetry export is off unless asked for; only then is its SDK loaded.
  const otel = otelSettings(argv, env, userConfig.otel, userConfig.path);
  config = applyFlags(config, argv);
  // --backend, else the config's (a resumed session's own), else $RHO_BACKEND (rho-agent's
  // RHO_AGENT_BACKEND too); without any, the profile's default (decided below).
  const backendOrigin =
    argv.backend !== undefined
      ? '--backend'
      : nonEmpty(argv.dockerfile) !== undefined || nonEmpty(argv.snapshot) !== undefined || argv.keepSandbox === true
        ? 'the daytona flags'
        : nonEmpty(config.backend) !== undefined
          ? configOrigin
          : nonEmpty(env.RHO_BACKEND) !== undefined
            ? 'RHO_BACKEND'
            : 'RHO_AGENT_BACKEND';
  const chosenBackend = nonEmpty(config.backend) ?? nonEmpty(env.RHO_BACKEND) ?? nonEmpty(env.RHO_AGENT_BACKEND);

  // An empty OPENAI_BASE_URL means unset (the OpenAI SDK would otherwise take '' for a host).
  if (env.OPENAI_BASE_URL !== undefined && env.OPENAI_BASE_URL.trim() === '') {
    delete env.OPENAI_BASE_URL;
    delete process.env.OPENAI_BASE_URL;
  }
  // On resume the saved base_url is a default: a flag (already in config) or the environment wins.
  const savedBaseUrl =
    resumedDirectory !== undefined && argv.baseUrl === undefined ? nonEmpty(config.baseUrl) : undefined;
  const baseURLSource =
    argv.baseUrl !== undefined
      ? '--base-url'
      : savedBaseUrl !== undefined && nonEmpty(env.OPENAI_BASE_URL) !== undefined
        ? 'OPENAI_BASE_URL'
        : nonEmpty(config.baseUrl) !== undefined
          ? `base_url (${configOrigin})`
          : 'OPENAI_BASE_URL';
  const rawBaseURL =
    savedBaseUrl !== undefined
      ? (nonEmpty(env.OPENAI_BASE_URL) ?? savedBaseUrl)
      : (nonEmpty(config.baseUrl) ?? nonEmpty(env.OPENAI_BASE_URL));
  const baseURL = rawBaseURL === undefined ? undefined : checkBaseUrl(rawBaseURL, baseURLSource);
  if (baseURL !== undefined && resumedDirectory !== undefined) config.baseUrl = baseURL;
  if (config.reasoningEffort !== undefined)
    config.reasoningEffort = checkChoice(
      config.reasoningEffort,
      REASONING_EFFORTS,
      argv.reasoningEffort !== undefined ? '--reasoning-effort' : 'reasoning_effort',
    );
  const apiKey = nonEmpty(env.OPENAI_API_KEY);
  // `gguf:PATH` runs a local model in this process (@rho/model-gguf, loaded only then).
  const ggufPath =
    nonEmpty(config.model)?.startsWith('gguf:') === true ? config.model!.slice('gguf:'.length) : undefined;
  if (ggufPath === undefined && baseURL === undefined && apiKey === undefined) {
    throw new UsageError({
      message:
        'Missing API key. Set OPENAI_API_KEY, or pass --base-url (or set OPENAI_BASE_URL) to an OpenAI-compatible endpoint that needs no key.',
    });
  }
  // The SDK loads while the profile, the tools and the session are set up, not in the first request.
  if (ggufPath === undefined) void preloadOpenAI();
  const model = nonEmpty(config.model) ?? nonEmpty(env.OPENAI_MODEL) ?? 'gpt-5-mini';
  // Flags (already in config) win over the agent config, which wins over the environment.
  const firstByteTimeout = config.firstByteTimeout ?? seconds(env.RHO_FIRST_BYTE_TIMEOUT, 'RHO_FIRST_BYTE_TIMEOUT');
  const idleTimeout = config.idleTimeout ?? seconds(env.RHO_IDLE_TIMEOUT, 'RHO_IDLE_TIMEOUT');
  const maxRetries = config.maxRetries ?? retries(env.RHO_MAX_RETRIES, 'RHO_MAX_RETRIES');
  // Bounds on one answer: flags, else the environment, else the model client's defaults.
  const maxAnswerTime =
    seconds(argv.maxAnswerTime, '--max-answer-time') ?? seconds(env.RHO_MAX_ANSWER_TIME, 'RHO_MAX_ANSWER_TIME');
  const maxAnswerSize =
    tokens(argv.maxAnswerSize, '--max-answer-size', 'characters') ??
    tokens(env.RHO_MAX_ANSWER_SIZE, 'RHO_MAX_ANSWER_SIZE', 'characters');
  const compaction = compactionOptions(argv, env, config);
  const workingDir = resolve(config.workingDir ?? process.cwd());
  if (!isDirectory(workingDir))
    throw new UsageError({
      message: `Working directory not found: ${workingDir}. Pass an existing directory to --working-dir.`,
    });
  config.workingDir = workingDir;
  config.model = model;
  // rho-agent's variables (RHO_AGENT_*) count when rho's own are not set.
  const profileName =
    nonEmpty(config.profile) ?? nonEmpty(env.RHO_PROFILE) ?? nonEmpty(env.RHO_AGENT_PROFILE) ?? 'readonly';
  const reasoningEffort = config.reasoningEffort ?? nonEmpty(env.RHO_AGENT_REASONING_EFFORT);
  const serviceTier = config.serviceTier ?? nonEmpty(env.RHO_AGENT_SERVICE_TIER);
  const profile = await loadProfile(profileName, { rhoHome: home });
  // `eval` works as `unrestricted` but is saved as the user wrote it, for scripts that check the name.
  const savedProfileName = profileName === 'eval' ? 'eval' : profile.name;
  config.profile = config.profile ?? savedProfileName;

  // Tools never run anywhere but where the user was told: a backend that is unknown or cannot
  // start here stops the run before the first model call (exit 2), never falls back to this machine.
  const backendName = chosenBackend ?? (await defaultBackendName({ name: savedProfileName }));
  const backend = await defaultBackendRegistry().create(backendName, {
    workingDir,
    options: config.backendOptions ?? {},
    access: backendAccess(profile),
    env,
    origin: chosenBackend === undefined ? `the default of profile ${savedProfileName}` : backendOrigin,
  });
  if (backendName === 'daytona' && config.backendOptions?.['keep_sandbox'] === true && 'sandboxId' in backend) {
    // It costs money while it runs: say which one is left behind.
    hooks.onWarning?.(
      `the Daytona sandbox ${String(backend.sandboxId)} is kept when rho exits (keep_sandbox); it stops after 15 idle minutes and stays until you delete it.`,
    );
  }
  const closeBackend = async () => {
    await backend.close?.();
  };
  held.closeBackend = closeBackend;
  // Also on the exits that skip `finally` (a second Ctrl+C, SIGTERM in the REPL).
  const forgetBackend = closeOnExit(closeBackend);
  // Saved with the session, so a resume runs its tools in the same place.
  config.backend = backendName;

  // A remote backend works in a directory of its own (the prompt's working_dir names it).
  const resolved = resolveSystemPrompt(config, argv, { home, workingDir: backend.workingDir ?? workingDir, profile });
  const { initialPrompt } = resolved;
  // Per-project instructions (AGENTS.md, .rho/instructions.md) follow the system prompt.
  const instructions = findProjectInstructions(workingDir);
  const systemPrompt = `${resolved.systemPrompt}${instructions.text}`;
  // A package named twice (the resumed session's saved path, and the same --tool-package given
  // again, relative) is loaded once.
  const namedPackages = new Set<string>();
  const toolPackages: ToolPackageReference[] = [
    // (A resumed session's config lives in its session directory: names also resolve from the current directory.)
    ...(config.toolPackages ?? []).map((spec) => ({
      spec,
      baseDirs: [...new Set([configDir ?? process.cwd(), workingDir, process.cwd()])],
      origin: configOrigin,
    })),
    ...(argv.toolPackage ?? [])
      .filter((spec) => spec.trim() !== '')
      .map((spec) => ({ spec: spec.trim(), baseDirs: [process.cwd(), workingDir], origin: '--tool-package' })),
  ].filter((reference) => {
    const key = absoluteSpec(reference);
    if (namedPackages.has(key)) return false;
    namedPackages.add(key);
    return true;
  });
  // The approvals the run command will be able to get (an approver on a terminal, --auto-approve, or none).
  // A person at a terminal answers on stdin and reads on stderr; the answer itself may be piped.
  const approvals: ApprovalAvailability =
    hooks.approvals ??
    (config.autoApprove === true
      ? 'auto'
      : process.stdin.isTTY === true && process.stderr.isTTY === true
        ? 'ask'
        : 'none');
  // Tools withheld for want of an approver are named by the caller in one line with what to do
  // (run-command's notice, from `withheld`), not by the toolset's generic warning.
  // The agent config's servers win by name over $RHO_HOME/config.yaml's.
  const mcpServers = parseMcpServerSources(
    [
      { origin: userConfig.path, servers: userConfig.mcpServers },
      { origin: configOrigin, servers: config.mcpServers },
    ],
    { env },
  );
  // Saved with the session so a resume loads the same packages (paths made absolute).
  if (toolPackages.length > 0) config.toolPackages = [...new Set(toolPackages.map(absoluteSpec))];
  // A new session exists (its directory, meta.json, its lock) before its tools start: `rho ps`
  // lists it and `rho cancel` reaches it while MCP servers start, which may take up to their
  // startup_timeout. Its config.yaml keeps no secret: the agent config's and the environment's are
  // known now (databases.yaml's passwords are never written into it).
  let created: { id: string; directory: string } | undefined;
  if (resumedDirectory === undefined) {
    const early = knownSecretsRedactor(env, [config, userConfig], {
      mcpServers,
      urls: [argv.fleet, argv.baseUrl, baseURL, argv.otel],
    });
    const saved = redactSessionConfig(configDocument(config), early);
    created = store.create({ config: saved.document, model, profile: savedProfileName, workingDir });
    held.created = created.directory;
    lock = SessionLock.acquire(created.directory);
    held.lock = lock;
    writeSessionSecrets(created.directory, saved.secrets);
  }
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
    toolPackages,
    approvals,
    onWithheld: () => {},
    ...(hooks.onWarning === undefined
      ? {}
      : {
          onWarning: hooks.onWarning,
          onDatabaseWarning: (warning: { message: string }) => hooks.onWarning?.(warning.message),
        }),
    ...(argv.dbConfig === undefined ? {} : { dbConfigPath: resolve(argv.dbConfig) }),
    ...(config.databases === undefined ? {} : { databases: config.databases }),
    mcpServers,
  }).finally(() => clearInterval(cancelWatch));
  // Every secret rho knows, kept from the model, the trace and what leaves the machine (the
  // fleet's tables, spans) by one redactor: the key of every tool result and record is replaced.
  const redactor = knownSecretsRedactor(env, [config, userConfig], {
    databases: toolset.databases,
    mcpServers,
    urls: [argv.fleet, argv.baseUrl, baseURL, argv.otel],
  });
  let localClient: Awaited<ReturnType<typeof loadGgufClient>> | undefined;
  try {
    localClient = ggufPath === undefined ? undefined : await loadGgufClient(ggufPath, env);
  } catch (error) {
    await toolset.close();
    throw error;
  }
  // The profile's tools and its approval policy (the one decision of which calls need approval).
  const agent = new Agent({
    toolset,
    redactor,
    systemPrompt,
    model,
    budgets: config.budgets,
    compaction,
    ...(localClient === undefined ? {} : { client: localClient }),
    clientOptions: {
      ...(baseURL === undefined ? {} : { baseURL }),
      // Local servers (vLLM, Ollama, llama.cpp) need no key, but the client requires one.
      apiKey: apiKey ?? 'no-key',
      ...(reasoningEffort === undefined ? {} : { reasoningEffort }),
      ...(firstByteTimeout === undefined ? {} : { firstByteTimeoutMs: firstByteTimeout * 1000 }),
      ...(idleTimeout === undefined ? {} : { idleTimeoutMs: idleTimeout * 1000 }),
      ...(maxAnswerTime === undefined ? {} : { maxAnswerMs: maxAnswerTime * 1000 }),
      ...(maxAnswerSize === undefined ? {} : { maxAnswerBytes: maxAnswerSize }),
      ...(maxRetries === undefined ? {} : { maxRetries }),
      ...(serviceTier === undefined ? {} : { serviceTier: serviceTier as never }),
      ...(config.responseFormat === undefined ? {} : { responseFormat: config.responseFormat as never }),
    },
  });

  const explicit =
    typeof argv.p === 'string' ? argv.p : Array.isArray(argv.prompt) ? argv.prompt.join(' ') : argv.prompt;
  const prompt = nonEmpty(explicit) ?? (resumedDirectory === undefined ? initialPrompt : undefined);
  // A fleet (--fleet, RHO_FLEET_URL, fleet: in the agent config or $RHO_HOME/config.yaml) is
  // loaded only when one is configured: without it nothing below touches @rho/fleet or postgres.
  const sources = fleetSources({ flag: argv.fleet, env, home, agentConfig: config.fleet });
  const labels = parseLabels(argv.label);
  let fleet: Awaited<ReturnType<typeof startFleetLink>> | undefined;
  try {
    fleet =
      sources === undefined
        ? undefined
        : await startFleetLink(
            sources,
            { userConfig: userConfig.fleet, agentConfig: config.fleet },
            labels,
            hooks,
            redactor,
          );
  } catch (error) {
    await toolset.close();
    await localClient?.close();
    throw error;
  }
  if (fleet === undefined && labels !== undefined)
    hooks.onWarning?.(
      '--label only applies to sessions registered in a fleet (--fleet URL or RHO_FLEET_URL); ignored.',
    );

  // A queued task's session also answers to the worker's lease: it stops itself when the lease
  // lapses (the worker is frozen or lost it), before another attempt can start elsewhere.
  const lease = taskLease(env);
  const guarded = (options: SessionOptions, directory: string): SessionOptions =>
    lease === undefined
      ? options
      : {
          ...options,
          control: new LeaseGuardChannel(options.control ?? new FileControlChannel(directory), lease, (message) =>
            hooks.onWarning?.(message),
          ),
        };
  let session: Session;
  try {
    if (resumedDirectory !== undefined && lock !== undefined) {
      const meta = readSessionMeta(resumedDirectory);
      const id = meta?.id ?? basename(resumedDirectory);
      const state = store.loadState(resumedDirectory);
      session = agent.createSession({
        id,
        directory: resumedDirectory,
        state,
        lock,
        ...guarded(
          fleet?.sessionOptions(
            {
              id,
              model,
              profile: savedProfileName,
              cwd: workingDir,
              ...(typeof meta?.parent_id === 'string' ? { parentId: meta.parent_id } : {}),
              ...(meta?.started_at === undefined ? {} : { startedAt: meta.started_at }),
              ...(meta?.first_prompt === undefined ? {} : { firstPrompt: meta.first_prompt }),
            },
            resumedDirectory,
          ) ?? (await fileChannelFor(resumedDirectory, state.directiveCursor)),
          resumedDirectory,
        ),
      });
    } else {
      // Made (and locked) before the tools started, above.
      const { id, directory } = created!;
      session = agent.createSession({
        id,
        directory,
        lock,
        ...guarded(
          fleet?.sessionOptions(
            {
              id,
              model,
              profile: savedProfileName,
              cwd: workingDir,
              ...(prompt === undefined ? {} : { firstPrompt: prompt }),
            },
            directory,
          ) ?? {},
          directory,
        ),
      });
    }
  } catch (error) {
    // The session could not be set up: what was started for it stops here (the caller's close never comes).
    await fleet?.close(0);
    await toolset.close();
    await localClient?.close();
    throw error;
  }

  let tracing: Awaited<ReturnType<typeof startOtel>> | undefined;
  if (otel !== undefined) {
    try {
      tracing = await startOtel(otel, env, {
        redactor,
        ...(hooks.onWarning === undefined ? {} : { onWarning: hooks.onWarning }),
      });
    } catch (error) {
      await fleet?.close(0);
      await localClient?.close();
      await agent.close();
      throw error;
    }
    tracing.instrument(session, { captureContent: otel.content });
  }
  // Taken above: the resumed session's, or the new one's before its tools started.
  const heldLock = lock!;
  const close = async () => {
    heldLock.release();
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
    config,
    model,
    prompt,
    resumed: resumedDirectory !== undefined,
    home,
    instructionFiles: instructions.files,
    withheld: toolset.withheld,
    backend,
    close,
  };
}

/**
 * `--dockerfile`, `--snapshot` (mutually exclusive; either implies `--backend daytona`) and
 * `--keep-sandbox` become the daytona backend's options, saved with the session.
 */
function applyDaytonaFlags(config: AgentConfig, argv: SetupArguments): void {
  const dockerfile = nonEmpty(argv.dockerfile);
  const snapshot = nonEmpty(argv.snapshot);
  if (dockerfile === undefined && snapshot === undefined && argv.keepSandbox !== true) return;
  if (dockerfile !== undefined && snapshot !== undefined) {
    throw new UsageError({ message: 'Cannot use both --dockerfile and --snapshot: choose one.' });
  }
  const flags = [dockerfile && '--dockerfile', snapshot && '--snapshot', argv.keepSandbox === true && '--keep-sandbox']
    .filter(Boolean)
    .join(', ');
  if (config.backend !== undefined && config.backend !== 'daytona') {
    throw new UsageError({
      message: `${flags} belong${flags.includes(',') ? '' : 's'} to the daytona backend, but the backend is '${config.backend}': drop the flag or use --backend daytona.`,
    });
  }
  if (config.backend !== 'daytona') delete config.backendOptions;
  config.backend = 'daytona';
  const options: Record<string, unknown> = { ...config.backendOptions };
  // A flag's image source replaces the config's.
  if (dockerfile !== undefined || snapshot !== undefined) {
    delete options['dockerfile'];
    delete options['snapshot'];
    delete options['image'];
  }
  if (dockerfile !== undefined) options['dockerfile'] = resolve(dockerfile);
  if (snapshot !== undefined) options['snapshot'] = snapshot;
  if (argv.keepSandbox === true) options['keep_sandbox'] = true;
  config.backendOptions = options;
}

function applyFlags(base: AgentConfig, argv: SetupArguments): AgentConfig {
  const config: AgentConfig = {
    ...base,
    vars: { ...base.vars },
    budgets: { ...base.budgets },
    extras: { ...base.extras },
  };
  if (argv.model !== undefined) config.model = argv.model;
  if (argv.baseUrl !== undefined) config.baseUrl = argv.baseUrl;
  if (argv.profile !== undefined) config.profile = argv.profile;
  if (argv.workingDir !== undefined) config.workingDir = resolve(argv.workingDir);
  if (argv.reasoningEffort !== undefined) config.reasoningEffort = argv.reasoningEffort;
  if (argv.systemPrompt !== undefined) config.systemPrompt = resolve(argv.systemPrompt);
  if (argv.autoApprove) config.autoApprove = true;
  const budgets: Budgets = config.budgets;
  if (argv.maxTurns !== undefined) budgets.maxTurns = checkPositiveInteger(argv.maxTurns, '--max-turns', 20);
  if (argv.maxTokens !== undefined) budgets.maxTokens = checkPositiveInteger(argv.maxTokens, '--max-tokens', 200000);
  if (argv.maxCost !== undefined) budgets.maxCostUsd = checkPositiveNumber(argv.maxCost, '--max-cost', 0.5);
  if (argv.firstByteTimeout !== undefined)
    config.firstByteTimeout = seconds(argv.firstByteTimeout, '--first-byte-timeout');
  if (argv.idleTimeout !== undefined) config.idleTimeout = seconds(argv.idleTimeout, '--idle-timeout');
  if (argv.maxRetries !== undefined) config.maxRetries = retries(argv.maxRetries, '--max-retries');
  if (argv.contextWindow !== undefined) config.contextWindow = tokens(argv.contextWindow, '--context-window');
  if (argv.backend !== undefined) {
    const name = argv.backend.trim();
    if (name === '') throw new UsageError({ message: '--backend needs a value: local, sandbox or daytona.' });
    // The config's options belong to the backend it names: another backend starts without them.
    if (name !== config.backend) delete config.backendOptions;
    config.backend = name;
  }
  applyDaytonaFlags(config, argv);
  return config;
}

/**
 * The context window settings, by precedence: `--context-window` (saved in the config, so a resume
 * keeps it), `$RHO_CONTEXT_WINDOW`, the config's `context_window`, its `context_windows` for the
 * model; without any, core asks the server, then the table of known models, then its default.
 */
function compactionOptions(argv: SetupArguments, env: NodeJS.ProcessEnv, config: AgentConfig): CompactionOptions {
  const fromEnv = tokens(env.RHO_CONTEXT_WINDOW, 'RHO_CONTEXT_WINDOW');
  const perModel = config.contextWindows === undefined ? {} : { contextWindows: config.contextWindows };
  if (argv.contextWindow !== undefined && config.contextWindow !== undefined)
    return { contextWindow: config.contextWindow, contextWindowSource: 'flag', ...perModel };
  if (fromEnv !== undefined) return { contextWindow: fromEnv, contextWindowSource: 'env', ...perModel };
  if (config.contextWindow !== undefined)
    return { contextWindow: config.contextWindow, contextWindowSource: 'config', ...perModel };
  return perModel;
}

/** A number of tokens from a flag or variable: a whole number above 0. */
function tokens(
  value: string | number | undefined,
  name: string,
  unit: 'tokens' | 'characters' = 'tokens',
): number | undefined {
  if (value === undefined) return undefined;
  if (String(value).trim() === '') {
    if (name.startsWith('--')) throw new UsageError({ message: `${name} needs a value.` });
    return undefined;
  }
  const number = Number(String(value).trim().replace(/_/g, ''));
  if (!Number.isInteger(number) || number <= 0)
    throw new UsageError({
      message: `${name} must be a whole number of ${unit}, for example ${unit === 'tokens' ? '32768' : '1048576'} (got ${JSON.stringify(String(value))}).`,
    });
  return number;
}

/** A timeout in seconds from a flag or variable: a positive number (`90`, `2.5`). */
function seconds(value: string | number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (String(value).trim() === '') {
    if (name.startsWith('--')) throw new UsageError({ message: `${name} needs a value.` });
    return undefined;
  }
  const number = Number(String(value).trim());
  if (!Number.isFinite(number) || number <= 0)
    throw new UsageError({
      message: `${name} must be a positive number of seconds, for example 300 (got ${JSON.stringify(String(value))}).`,
    });
  return number;
}

/** A retry count from a flag or variable: a whole number, 0 or more. */
function retries(value: string | number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (String(value).trim() === '') {
    if (name.startsWith('--')) throw new UsageError({ message: `${name} needs a value.` });
    return undefined;
  }
  const number = Number(String(value).trim());
  if (!Number.isInteger(number) || number < 0)
    throw new UsageError({
      message: `${name} must be a whole number of retries, 0 or more (got ${JSON.stringify(String(value))}).`,
    });
  return number;
}

/**
 * The system prompt, by precedence: `--system-prompt` file, the config's `system_prompt` (a
 * `.md` path is a prompt file, anything else literal text), `$RHO_HOME/default.md`, the built-in.
 */
function resolveSystemPrompt(
  config: AgentConfig,
  argv: SetupArguments,
  context: { home: string; workingDir: string; profile: PermissionProfile },
): { systemPrompt: string; initialPrompt?: string } {
  const cliVars = {
    ...(argv.varsFile === undefined ? {} : loadVarsFile(resolve(argv.varsFile))),
    ...parseVars(checkVars(argv.var)),
  };
  const builtinVars = {
    platform: platformName(),
    home_dir: homedir(),
    working_dir: context.workingDir,
    profile_name: context.profile.name,
    shell_mode: context.profile.shell,
    file_write_mode: context.profile.fileWrite,
    database_mode: context.profile.database,
  };
  const source = config.systemPrompt;
  if (source !== undefined && source.trim() !== '') {
    if (!source.trim().endsWith('.md')) return { systemPrompt: source };
    const path = isAbsolute(source) ? source : resolve(source);
    config.vars = { ...config.vars, ...cliVars };
    return preparePrompt(loadPromptFile(path), { ...builtinVars, ...config.vars });
  }
  const userDefault = join(context.home, 'default.md');
  if (existsSync(userDefault)) return preparePrompt(loadPromptFile(userDefault), { ...builtinVars, ...cliVars });
  return {
    systemPrompt: defaultSystemPrompt({
      platform: builtinVars.platform,
      homeDir: builtinVars.home_dir,
      workingDir: context.workingDir,
      profile: context.profile,
    }),
  };
}

function configDocument(config: AgentConfig): Record<string, unknown> {
  const document: Record<string, unknown> = {};
  if (config.systemPrompt !== undefined) document.system_prompt = config.systemPrompt;
  if (Object.keys(config.vars).length > 0) document.vars = config.vars;
  document.model = config.model;
  document.profile = config.profile;
  document.backend =
    config.backendOptions === undefined || Object.keys(config.backendOptions).length === 0
      ? (config.backend ?? 'local')
      : { name: config.backend ?? 'local', ...config.backendOptions };
  document.working_dir = config.workingDir;
  if (config.baseUrl !== undefined) document.base_url = config.baseUrl;
  if (config.serviceTier !== undefined) document.service_tier = config.serviceTier;
  if (config.reasoningEffort !== undefined) document.reasoning_effort = config.reasoningEffort;
  if (config.responseFormat !== undefined) document.response_format = config.responseFormat;
  if (config.databases !== undefined) document.databases = config.databases;
  if (config.toolPackages !== undefined && config.toolPackages.length > 0) document.tool_packages = config.toolPackages;
  if (config.mcpServers !== undefined && Object.keys(config.mcpServers).length > 0)
    document.mcp_servers = config.mcpServers;
  const budgets = Object.entries({
    max_turns: config.budgets.maxTurns,
    max_tokens: config.budgets.maxTokens,
    max_cost_usd: config.budgets.maxCostUsd,
    max_duration_ms: config.budgets.maxDurationMs,
  }).filter(([, value]) => value !== undefined);
  if (budgets.length > 0) document.budgets = Object.fromEntries(budgets);
  document.auto_approve = config.autoApprove ?? false;
  if (config.firstByteTimeout !== undefined) document.first_byte_timeout = config.firstByteTimeout;
  if (config.idleTimeout !== undefined) document.idle_timeout = config.idleTimeout;
  if (config.maxRetries !== undefined) document.max_retries = config.maxRetries;
  if (config.contextWindow !== undefined) document.context_window = config.contextWindow;
  if (config.contextWindows !== undefined) document.context_windows = config.contextWindows;
  // Round-trip through the parser so what is saved is exactly what a resume will read.
  parseAgentConfig({ ...document, ...config.extras });
  return { ...document, ...config.extras };
}

/** A path reference made absolute (names stay names). */
function absoluteSpec(reference: ToolPackageReference): string {
  const { spec } = reference;
  if (spec.startsWith('~') || isAbsolute(spec) || !spec.startsWith('.')) return spec;
  return resolve(reference.baseDirs[0] ?? process.cwd(), spec);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function platformName(): string {
  const names: Record<string, string> = { linux: 'Linux', darwin: 'macOS', win32: 'Windows' };
  return names[platform()] ?? platform();
}

/** The in-process GGUF client of `--model gguf:PATH`; its package is imported only here. */
async function loadGgufClient(
  path: string,
  env: Record<string, string | undefined>,
): Promise<import('@rho/model-gguf').GgufModelClient> {
  if (path.trim() === '')
    throw new UsageError({ message: 'The model gguf: needs a path: --model gguf:PATH (a .gguf file).' });
  let module: typeof import('@rho/model-gguf');
  try {
    module = await import('@rho/model-gguf');
  } catch (error) {
    throw new UsageError({
      message: `--model gguf:${path} needs the package @rho/model-gguf (it brings node-llama-cpp and llama.cpp's prebuilt binaries): install it next to rho, for example \`npm install -g @rho/model-gguf\`. (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`,
    });
  }
  const modelPath = resolve(path);
  if (!existsSync(modelPath))
    throw new UsageError({
      message: `GGUF model not found: ${modelPath}. Pass the path of a .gguf file to --model gguf:PATH.`,
    });
  const toolChoice = nonEmpty(env['RHO_GGUF_TOOL_CHOICE']);
  if (toolChoice !== undefined && toolChoice !== 'auto' && toolChoice !== 'required' && toolChoice !== 'none') {
    throw new UsageError({
      message: `RHO_GGUF_TOOL_CHOICE must be auto, required or none (got ${JSON.stringify(toolChoice)}).`,
    });
  }
  return module.createGgufModelClient({ modelPath, ...(toolChoice === undefined ? {} : { toolChoice }) });
}
