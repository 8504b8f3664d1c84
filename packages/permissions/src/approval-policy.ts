import type { AnyTool } from '@rho/core';
import { declaredMcpIdentity, mcpToolRuling, type McpToolIdentity } from './mcp-rules.js';
import { DEFAULT_DANGEROUS_TOOLS, type PermissionProfile } from './permission-profile.js';

/** The answer of a {@link ProfileApprovalPolicy}. */
export interface ApprovalRequirement {
  /** Whether a person must approve the call before it runs. */
  required: boolean;
  /** Why approval is required (absent when it is not). */
  reason?: string;
  /** The dangerous pattern the call's arguments contain, when they contain one. */
  dangerous?: string;
}

function collectStrings(value: unknown, into: string[], depth = 0): void {
  if (depth > 8) return;
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) for (const item of value) collectStrings(item, into, depth + 1);
  else if (typeof value === 'object' && value !== null)
    for (const item of Object.values(value)) collectStrings(item, into, depth + 1);
}

function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').toLowerCase();
}

/** The first dangerous pattern found in any string argument (case and spacing ignored), if any. */
export function matchDangerousPattern(patterns: readonly string[], args: Record<string, unknown>): string | undefined {
  const strings: string[] = [];
  collectStrings(args, strings);
  const haystacks = strings.map(normalise);
  for (const pattern of patterns) {
    const needle = normalise(pattern);
    if (needle.trim().length === 0) continue;
    if (haystacks.some((haystack) => haystack.includes(needle))) return pattern;
  }
  return undefined;
}

/**
 * The names of rho's own tools (tools-fs, tools-db and `delegate`): the profile's approval rules
 * name them, so their annotations are not consulted. Any other tool is judged by what it declares.
 */
export const BUILTIN_TOOL_NAMES: readonly string[] = [
  'read',
  'grep',
  'glob',
  'list',
  'read_excel',
  'bash',
  'write',
  'edit',
  'sqlite',
  'postgres',
  'mysql',
  'oracle',
  'vertica',
  'delegate',
];

/** What an approval policy sees of a tool: its name and its annotations (a core tool fits). */
export type ApprovalSubject = Pick<AnyTool, 'name' | 'annotations'>;

/**
 * Whether a call of a tool with these arguments needs approval; assignable to core's
 * `ApprovalPolicy`, so it goes straight into `new Agent({ approvalPolicy })`.
 */
export type ProfileApprovalPolicy = (tool: ApprovalSubject, args: Record<string, unknown>) => ApprovalRequirement;

/** Options of {@link approvalPolicy} and {@link everyCallNeedsApproval}. */
export interface ApprovalPolicyOptions {
  /**
   * Whether a tool is one of rho's own, judged by the profile's tool names rather than by its
   * annotations. Default: its name is in {@link BUILTIN_TOOL_NAMES}. `createToolset` of
   * `@rho/agent` answers by identity (the tool objects it made), so no other tool passes as one.
   */
  isBuiltinTool?: (tool: ApprovalSubject) => boolean;
  /** How a tool is named in reasons (for example with the package it came from). Default: its name. */
  describeTool?: (tool: ApprovalSubject) => string;
  /**
   * Which MCP server and tool a call reaches, or undefined for a tool that is not an MCP tool
   * (`per-call` for a tool whose target its arguments name, asked about without arguments). MCP
   * tools are judged by the profile's `mcp:` rules, never by their annotations alone. Default:
   * what the tool declares (`declaredMcpIdentity`: the `mcp` property `@rho/tools-mcp` sets).
   */
  mcpTool?: (tool: ApprovalSubject, args?: Record<string, unknown>) => McpToolIdentity | 'per-call' | undefined;
}

/**
 * Why every call of a tool needs approval under a profile, whatever its arguments; undefined when
 * some calls (or all) run without. The part of the decision that does not read arguments, except
 * which MCP tool a call reaches (`args`, for a tool whose arguments name its target).
 */
function standingRequirement(
  profile: PermissionProfile,
  tool: ApprovalSubject,
  options: ApprovalPolicyOptions,
  args?: Record<string, unknown>,
): string | undefined {
  const label = options.describeTool?.(tool) ?? tool.name;
  const mcp = options.mcpTool === undefined ? declaredMcpIdentity(tool, args) : options.mcpTool(tool, args);
  // Decided per call, by the MCP tool the arguments name.
  if (mcp === 'per-call') return undefined;
  if (mcp !== undefined) {
    const ruling = mcpToolRuling(profile, mcp);
    // A denied tool is not offered; should one be called anyway, nobody may approve it blind.
    return ruling.decision === 'allow' ? undefined : ruling.reason;
  }
  switch (profile.approval) {
    case 'none':
      return undefined;
    case 'all':
      return `profile ${profile.name} requires approval for every tool call (approval: all)`;
    case 'dangerous':
    case 'granular': {
      const listed = profile.approval === 'dangerous' ? DEFAULT_DANGEROUS_TOOLS : profile.requiredTools;
      if (listed.includes(tool.name)) {
        return profile.approval === 'dangerous'
          ? `${label} is a dangerous tool and profile ${profile.name} requires approval for dangerous tools (approval: dangerous)`
          : `profile ${profile.name} requires approval for ${label} (approval.required_tools)`;
      }
      const builtin = options.isBuiltinTool?.(tool) ?? BUILTIN_TOOL_NAMES.includes(tool.name);
      if (builtin) return undefined;
      // Deny by default: rho cannot see what another tool's code does, only what it declares.
      const annotations = tool.annotations ?? {};
      if (annotations.readOnly !== true)
        return `${label} is not declared read-only (annotations.readOnly), so profile ${profile.name} asks before it runs`;
      if (annotations.destructive === true)
        return `${label} is declared destructive, so profile ${profile.name} asks before it runs`;
      if (annotations.openWorld === true)
        return `${label} reaches beyond this machine (annotations.openWorld), so profile ${profile.name} asks before it runs`;
      return undefined;
    }
    default: {
      const exhaustive: never = profile.approval;
      return exhaustive;
    }
  }
}

/**
 * The approval policy of a profile: the one decision of which tool calls need approval, for the
 * agent to own (`new Agent({ approvalPolicy: approvalPolicy(profile) })`; `@rho/agent` does this).
 *
 * - `none`: nothing needs approval.
 * - `all`: every call does.
 * - `dangerous`: the dangerous tools (`bash`, `write`, `edit`, the database tools, `delegate`);
 *   `granular`: the profile's `requiredTools`. Under both, a call whose string arguments contain
 *   one of the profile's `dangerousPatterns` (case and spacing ignored, nested arguments
 *   included) needs approval too (the original documented this and never applied it), and a tool
 *   that is not one of rho's own needs approval unless it declares `readOnly` (and neither
 *   `destructive` nor `openWorld`).
 *
 * - MCP tools (see {@link ApprovalPolicyOptions.mcpTool}) follow the profile's `mcp:` section
 *   (`mcpToolRuling`): allowed tools run, the others need approval; the server's hints are shown
 *   in the reason and never decide.
 *
 * The session denies a call that needs approval, with the reason, when nobody can answer.
 */
export function approvalPolicy(profile: PermissionProfile, options: ApprovalPolicyOptions = {}): ProfileApprovalPolicy {
  return (tool, args) => {
    const standing = standingRequirement(profile, tool, options, args);
    // Named whether or not the tool always asks: a dangerous call is never approved by a timeout,
    // a hook or an "always this tool" answer.
    const pattern = profile.approval === 'none' ? undefined : matchDangerousPattern(profile.dangerousPatterns, args);
    const dangerous = pattern === undefined ? {} : { dangerous: pattern };
    if (standing !== undefined) return { required: true, reason: standing, ...dangerous };
    if (profile.approval === 'none') return { required: false };
    if (pattern !== undefined) {
      return {
        required: true,
        reason: `the arguments contain the dangerous pattern "${pattern}" (approval.dangerous_patterns of profile ${profile.name})`,
        ...dangerous,
      };
    }
    return { required: false };
  };
}

/**
 * Whether every call of a tool needs approval under a profile, whatever its arguments: such a
 * tool is useless where nobody can approve, and `createToolset` does not offer it there. A tool
 * whose calls need approval only for some arguments (a dangerous pattern) is not one of them.
 */
export function everyCallNeedsApproval(
  profile: PermissionProfile,
  tool: ApprovalSubject,
  options: ApprovalPolicyOptions = {},
): boolean {
  return standingRequirement(profile, tool, options) !== undefined;
}
