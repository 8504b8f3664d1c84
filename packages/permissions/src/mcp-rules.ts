import type { PermissionProfile } from './permission-profile.js';

/** What a profile decides for an MCP tool: run it, ask a person first, or never offer it. */
export type McpDecision = 'allow' | 'ask' | 'deny';

/** The decisions, in the order documentation lists them. */
export const MCP_DECISIONS: readonly McpDecision[] = ['allow', 'ask', 'deny'];

/**
 * The `mcp:` section of a profile: patterns `server` or `server/tool` (`*` and `?` are globs)
 * for each decision, and the decision for tools no pattern matches.
 */
export interface McpPermissions {
  /** Decision for tools no pattern matches; absent: ask (none under `approval: none`). */
  default?: McpDecision;
  /** Tools that run without approval (unless `approval: all`). */
  allow: string[];
  /** Tools that need approval for every call. */
  ask: string[];
  /** Tools that are never offered; deny wins over every other pattern. */
  deny: string[];
  /**
   * Tools the profile trusts as read-only, each named exactly (`server/tool`, no globs): the only
   * MCP tools a profile that promises no changes ({@link promisesNoChanges}) offers, whatever the
   * server's `readOnlyHint` says. They run without approval (unless `approval: all`).
   */
  readOnly?: string[];
}

/**
 * Whether a profile promises that nothing changes (the `readonly` profile, or any profile with its
 * settings: restricted shell, `file_write: off`, `database: readonly`). Under such a profile an MCP
 * tool is offered only when `mcp.read_only` names it, so no approval (`-y` included) can let a tool
 * that only claims to be read-only change anything.
 */
export function promisesNoChanges(profile: PermissionProfile): boolean {
  return profile.shell === 'restricted' && profile.fileWrite === 'off' && profile.database === 'readonly';
}

/** Why an `mcp.read_only` entry is malformed, or undefined when it names one tool exactly. */
export function mcpReadOnlyProblem(entry: string): string | undefined {
  const parts = entry.split('/');
  if (parts.length !== 2 || parts.some((part) => part.trim() === ''))
    return 'must name one tool as server/tool (a whole server cannot be trusted as read-only)';
  if (/[*?]/.test(entry)) return 'must name one tool exactly: no * or ? (each trusted tool is named)';
  return undefined;
}

/** Which MCP server and tool a rho tool calls, and the hints the server gave about it. */
export interface McpToolIdentity {
  /** The configured server name. */
  server: string;
  /** The tool's name on the server (before prefixing and sanitising). */
  tool: string;
  /** The server's `readOnlyHint`: shown in approval reasons, never trusted on its own. */
  readOnlyHint?: boolean;
  /** The server's `destructiveHint`. */
  destructiveHint?: boolean;
}

/** A profile's decision for one MCP tool, and why. */
export interface McpToolRuling {
  decision: McpDecision;
  /** The pattern that decided, when one did. */
  pattern?: string;
  /** A sentence saying why, for approval prompts and warnings. */
  reason: string;
}

/** Why a pattern is malformed, or undefined when it is fine. */
export function mcpPatternProblem(pattern: string): string | undefined {
  if (pattern.trim() === '') return 'is empty';
  const parts = pattern.split('/');
  if (parts.length > 2) return 'has more than one "/": write server or server/tool';
  if (parts.some((part) => part === '')) return 'has an empty server or tool part: write server or server/tool';
  return undefined;
}

function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

/** How precisely a pattern names a tool: a named tool beats a tool glob beats a whole server. */
function specificity(pattern: string): number {
  const [server = '', tool] = pattern.split('/');
  const serverExact = /[*?]/.test(server) ? 0 : 1;
  const toolScore = tool === undefined || tool === '*' ? 0 : /[*?]/.test(tool) ? 1 : 2;
  return toolScore * 2 + serverExact;
}

function matches(pattern: string, identity: McpToolIdentity): boolean {
  const [server = '', tool = '*'] = pattern.split('/');
  return globToRegExp(server).test(identity.server) && globToRegExp(tool).test(identity.tool);
}

function hintNote(identity: McpToolIdentity): string {
  if (identity.readOnlyHint === true) return ' (the server says it is read-only, which rho does not take on trust)';
  if (identity.destructiveHint === true) return ' (the server says it may destroy data)';
  return '';
}

/**
 * The profile's decision for an MCP tool: a `deny` pattern wins; then a tool named in
 * `mcp.read_only` runs (asks under `approval: all`); under a profile that promises no changes
 * ({@link promisesNoChanges}) every other MCP tool is denied (not offered); otherwise the most specific
 * matching `allow` or `ask` pattern (a named tool beats a glob beats a whole server; a tie asks);
 * otherwise `mcp.default`, else no approval under `approval: none` and approval under every
 * other mode (deny by default: a server's own `readOnlyHint` is never trusted on its own).
 * `approval: all` asks even for allowed tools.
 */
export function mcpToolRuling(profile: PermissionProfile, identity: McpToolIdentity): McpToolRuling {
  const rules = profile.mcp;
  const label = `MCP tool ${identity.tool} of server ${identity.server}`;
  const deny = rules?.deny.find((pattern) => matches(pattern, identity));
  if (deny !== undefined)
    return { decision: 'deny', pattern: deny, reason: `profile ${profile.name} denies ${label} (mcp.deny: ${deny})` };
  const named = `${identity.server}/${identity.tool}`;
  const trusted = rules?.readOnly?.includes(named) === true;
  if (trusted && profile.approval === 'all')
    return {
      decision: 'ask',
      pattern: named,
      reason: `profile ${profile.name} requires approval for every tool call (approval: all), ${label} included`,
    };
  if (trusted)
    return {
      decision: 'allow',
      pattern: named,
      reason: `profile ${profile.name} trusts ${label} as read-only (mcp.read_only: ${named})`,
    };
  // A promise of no changes is not left to approvals (nor -y): only tools named read-only are offered.
  if (promisesNoChanges(profile))
    return {
      decision: 'deny',
      reason: `profile ${profile.name} changes nothing, so it offers ${label} only when it names it as read-only (mcp.read_only: ${named})${hintNote(identity)}`,
    };
  let best: { decision: 'allow' | 'ask'; pattern: string; score: number } | undefined;
  for (const decision of ['ask', 'allow'] as const) {
    for (const pattern of rules?.[decision] ?? []) {
      if (!matches(pattern, identity)) continue;
      const score = specificity(pattern);
      // Ask is visited first, so on a tie it stays: the safer reading.
      if (best === undefined || score > best.score) best = { decision, pattern, score };
    }
  }
  if (best?.decision === 'allow') {
    if (profile.approval === 'all')
      return {
        decision: 'ask',
        pattern: best.pattern,
        reason: `profile ${profile.name} requires approval for every tool call (approval: all), ${label} included`,
      };
    return {
      decision: 'allow',
      pattern: best.pattern,
      reason: `profile ${profile.name} allows ${label} (mcp.allow: ${best.pattern})`,
    };
  }
  if (best?.decision === 'ask')
    return {
      decision: 'ask',
      pattern: best.pattern,
      reason: `profile ${profile.name} asks before ${label} runs (mcp.ask: ${best.pattern})${hintNote(identity)}`,
    };
  const fallback = rules?.default ?? (profile.approval === 'none' ? 'allow' : 'ask');
  if (fallback === 'deny')
    return {
      decision: 'deny',
      reason: `profile ${profile.name} denies MCP tools it does not name (mcp.default: deny), ${label} among them`,
    };
  if (fallback === 'allow' && profile.approval !== 'all')
    return { decision: 'allow', reason: `profile ${profile.name} runs MCP tools it does not name without approval` };
  return {
    decision: 'ask',
    reason: `profile ${profile.name} does not allow ${label} by name (mcp.allow), so it asks before it runs${hintNote(identity)}`,
  };
}

/**
 * The MCP identity a tool declares: its `mcp` property (as `@rho/tools-mcp` sets it), or, for a
 * tool that calls whichever MCP tool its arguments name (deferred loading's `call_mcp_tool`), the
 * identity its `mcp` function gives for these arguments; `per-call` when such a tool is asked
 * about without arguments (each call is decided by its target). Undefined for other tools.
 */
export function declaredMcpIdentity(
  tool: object,
  args?: Record<string, unknown>,
): McpToolIdentity | 'per-call' | undefined {
  const value: unknown = (tool as { mcp?: unknown }).mcp;
  if (typeof value === 'function')
    return args === undefined
      ? 'per-call'
      : (asIdentity((value as (args: Record<string, unknown>) => unknown)(args)) ?? {
          server: '',
          tool: String(args.tool ?? ''),
        });
  return asIdentity(value);
}

function asIdentity(value: unknown): McpToolIdentity | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { server, tool } = value as { server?: unknown; tool?: unknown };
  return typeof server === 'string' && typeof tool === 'string' ? (value as McpToolIdentity) : undefined;
}
