import { ConfigError } from '@rho/core';

/** The events a notification hook runs on (once per trace record that marks it). */
export const NOTIFICATION_EVENTS = [
  'session_end',
  'waiting_approval',
  'error',
  'budget_reached',
  'directive_received',
] as const;

/** The events of hooks around tool calls. */
export const TOOL_EVENTS = ['pre_tool', 'post_tool'] as const;

/** Every event of the `hooks:` setting. */
export const HOOK_EVENTS = [...NOTIFICATION_EVENTS, ...TOOL_EVENTS] as const;

export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];
export type ToolEvent = (typeof TOOL_EVENTS)[number];
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** A hook's timeout when it gives none, in seconds. */
export const DEFAULT_HOOK_TIMEOUT_SECONDS = 10;
/** The longest timeout a hook may ask for, in seconds. */
export const MAX_HOOK_TIMEOUT_SECONDS = 600;

interface HookBase {
  /** How the trace names it: its `name`, else its command or URL. */
  readonly label: string;
  /** Its timeout in milliseconds. */
  readonly timeoutMs: number;
  /** For `pre_tool` and `post_tool`: the tools it runs for (`*` matches any characters); all when absent. */
  readonly tools?: readonly string[];
  /** Where it was configured (`FILE:LINE` of the `hooks` key), for messages. */
  readonly origin: string;
}

/** A hook that runs a command with `sh -c`, the event as JSON on its standard input. */
export interface CommandHookConfig extends HookBase {
  readonly kind: 'command';
  readonly command: string;
}

/** A hook that POSTs the event as JSON to a URL, signed with HMAC-SHA256 when it names a secret. */
export interface HttpHookConfig extends HookBase {
  readonly kind: 'http';
  readonly url: string;
  /** The variable holding the HMAC key (`secret_env`). */
  readonly secretEnv?: string;
  /** Its value, read when the settings were resolved. */
  readonly secret?: string;
}

export type HookConfig = CommandHookConfig | HttpHookConfig;

/** The hooks of a run, by event, in the order they run (`$RHO_HOME/config.yaml`'s first). */
export type HooksConfig = { readonly [Event in HookEvent]: readonly HookConfig[] };

/** One `hooks:` mapping as read from a file. */
export interface HooksSource {
  /** `FILE:LINE` (or the file) of its `hooks` key. */
  readonly origin: string;
  readonly value: unknown;
}

const HOOK_KEYS = ['command', 'url', 'name', 'timeout', 'tools', 'secret_env'];

/** No hooks. */
export function emptyHooksConfig(): HooksConfig {
  return Object.fromEntries(HOOK_EVENTS.map((event) => [event, []])) as unknown as HooksConfig;
}

/**
 * The hooks of every source, each event's list of the first source first. A malformed hook is a
 * {@link ConfigError} of one line naming the file, the key and what to write instead.
 */
export function parseHooksSources(
  sources: readonly HooksSource[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): HooksConfig {
  const hooks = emptyHooksConfig() as Record<HookEvent, HookConfig[]>;
  for (const source of sources) {
    if (source.value === undefined || source.value === null) continue;
    const parsed = parseHooks(source, env);
    for (const event of HOOK_EVENTS) hooks[event].push(...parsed[event]);
  }
  return hooks;
}

function parseHooks(source: HooksSource, env: Readonly<Record<string, string | undefined>>): HooksConfig {
  const fail = (field: string, message: string): ConfigError => problem(source.origin, field, message);
  if (!isMapping(source.value))
    throw fail('hooks', `must be a mapping of events (${HOOK_EVENTS.join(', ')}) to lists of hooks`);
  const hooks = emptyHooksConfig() as Record<HookEvent, HookConfig[]>;
  for (const [event, list] of Object.entries(source.value)) {
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      const near = nearest(event, HOOK_EVENTS);
      throw fail(
        `hooks.${event}`,
        `is not an event: use one of ${HOOK_EVENTS.join(', ')}${near === undefined ? '' : ` (did you mean ${near}?)`}`,
      );
    }
    if (list === null || list === undefined) continue;
    const items = Array.isArray(list) ? list : [list];
    items.forEach((item, index) => {
      hooks[event as HookEvent].push(
        parseHook(item, `hooks.${event}[${index}]`, event as HookEvent, source.origin, env),
      );
    });
  }
  return hooks;
}

function parseHook(
  item: unknown,
  field: string,
  event: HookEvent,
  origin: string,
  env: Readonly<Record<string, string | undefined>>,
): HookConfig {
  const fail = (key: string, message: string): ConfigError => problem(origin, key, message);
  if (typeof item === 'string') item = { command: item };
  if (!isMapping(item)) throw fail(field, 'must be a mapping with a command or a url (or a command as a string)');
  for (const key of Object.keys(item))
    if (!HOOK_KEYS.includes(key)) {
      const near = nearest(key, HOOK_KEYS);
      throw fail(
        `${field}.${key}`,
        `is not a hook setting: use ${HOOK_KEYS.join(', ')}${near === undefined ? '' : ` (did you mean ${near}?)`}`,
      );
    }
  const { command, url, name, timeout, tools, secret_env: secretEnv } = item;
  if ((command === undefined) === (url === undefined))
    throw fail(field, 'needs exactly one of command (run with sh -c) or url (an http(s) URL to POST to)');
  if (command !== undefined && (typeof command !== 'string' || command.trim() === ''))
    throw fail(`${field}.command`, `must be a non-empty command line (got ${shown(command)})`);
  if (url !== undefined && (typeof url !== 'string' || !/^https?:\/\/[^\s/]+/i.test(url.trim())))
    throw fail(`${field}.url`, `must be an http:// or https:// URL (got ${shown(url)})`);
  if (name !== undefined && (typeof name !== 'string' || name.trim() === ''))
    throw fail(`${field}.name`, `must be a non-empty string (got ${shown(name)})`);
  if (
    timeout !== undefined &&
    (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0 || timeout > MAX_HOOK_TIMEOUT_SECONDS)
  )
    throw fail(
      `${field}.timeout`,
      `must be a number of seconds above 0 and at most ${MAX_HOOK_TIMEOUT_SECONDS}, for example 5 (got ${shown(timeout)})`,
    );
  let toolList: string[] | undefined;
  if (tools !== undefined) {
    if (!(TOOL_EVENTS as readonly string[]).includes(event))
      throw fail(`${field}.tools`, 'applies only to pre_tool and post_tool hooks: remove it');
    const list = typeof tools === 'string' ? [tools] : tools;
    if (
      !Array.isArray(list) ||
      list.length === 0 ||
      list.some((tool) => typeof tool !== 'string' || tool.trim() === '')
    )
      throw fail(`${field}.tools`, `must be a list of tool names such as [shell, write] (got ${shown(tools)})`);
    toolList = list.map((tool: string) => tool.trim());
  }
  const timeoutMs = Math.round((timeout ?? DEFAULT_HOOK_TIMEOUT_SECONDS) * 1000);
  const common = {
    timeoutMs,
    origin,
    ...(toolList === undefined ? {} : { tools: toolList }),
  };
  if (typeof command === 'string') {
    if (secretEnv !== undefined) throw fail(`${field}.secret_env`, 'applies only to url hooks: remove it');
    return { kind: 'command', command, label: typeof name === 'string' ? name.trim() : command, ...common };
  }
  const target = (url as string).trim();
  let secret: string | undefined;
  if (secretEnv !== undefined) {
    if (typeof secretEnv !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(secretEnv))
      throw fail(`${field}.secret_env`, `must be the name of an environment variable (got ${shown(secretEnv)})`);
    secret = env[secretEnv];
    if (secret === undefined || secret === '')
      throw fail(`${field}.secret_env`, `names ${secretEnv}, which is not set: export it, or remove secret_env`);
  }
  return {
    kind: 'http',
    url: target,
    label: typeof name === 'string' ? name.trim() : target,
    ...common,
    ...(typeof secretEnv === 'string' ? { secretEnv } : {}),
    ...(secret === undefined ? {} : { secret }),
  };
}

/** Whether a `tools` list admits a tool (`*` matches any characters). */
export function hookMatchesTool(hook: HookConfig, toolName: string): boolean {
  if (hook.tools === undefined) return true;
  return hook.tools.some((pattern) =>
    new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}$`).test(toolName),
  );
}

function problem(origin: string, field: string, message: string): ConfigError {
  const file = /^(.*?)(?::(\d+))?$/.exec(origin);
  return new ConfigError({
    message: `${origin}: '${field}' ${message}.`,
    field,
    ...(file?.[1] === undefined ? {} : { file: file[1] }),
    ...(file?.[2] === undefined ? {} : { line: Number(file[2]) }),
  });
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The candidate within two edits of `word`, if one is. */
function nearest(word: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(word.toLowerCase(), name);
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}
