import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { checkShellCommand, type ShellPlan } from './check-shell-command.js';
import { checkSql, type SqlDialect } from './check-sql.js';
import { checkWritePath } from './check-write-path.js';
import type { PermissionProfile } from './permission-profile.js';
import { approvalPolicy } from './approval-policy.js';
import { readView } from './read-view.js';
import {
  commandNeedsNetwork,
  sandboxStatus,
  sandboxWrapper,
  type SandboxLookupOptions,
  type SandboxMode,
} from './sandbox-wrapper.js';

/** The tools that write files: `rho policy check --write PATH --via TOOL` asks about one of them. */
export type WriteTool = 'write' | 'edit' | 'export_query';

const WRITE_TOOLS: readonly WriteTool[] = ['write', 'edit', 'export_query'];

/** What {@link explainPolicy} is asked about: one shell command line, one write path or one SQL statement. */
export type PolicyRequest = { profile: PermissionProfile } & (
  | { shell: string; sandboxLookup?: SandboxLookupOptions; workingDir?: string }
  | { write: string; workingDir: string; roots?: string[]; via?: WriteTool; rhoHome?: string; sessionDir?: string }
  | { sql: string; dialect: SqlDialect }
  | { read: string; workingDir: string; rhoHome?: string; sessionDir?: string }
);

/**
 * A policy decision explained; plain JSON (`rho policy check --json` prints it verbatim). Fields
 * are absent rather than null when they do not apply.
 */
export interface PolicyExplanation {
  /** What was checked. */
  kind: 'shell' | 'write' | 'sql' | 'read';
  /** Name of the profile that decided. */
  profile: string;
  /** The command line, path or statement, as given. */
  input: string;
  /** The decision. */
  allowed: boolean;
  /** The rule that decided, e.g. `shell.allowlist`, `program.sed`, `write.sensitive`, `sql.read`. */
  rule: string;
  /** Why it was refused (only when refused). */
  reason?: string;
  /** Shell: every argv that was checked, wrapped commands included, outermost first. */
  commands?: string[][];
  /** Shell, when allowed: the plan that restricted mode runs (before run-time hardening). */
  plan?: ShellPlan;
  /**
   * Shell: the operating-system sandbox on this machine for this profile: whether commands run in
   * it (`active`), what provides it, and which programs of the plan get the network (all others
   * have none). Without a sandbox the profile requires, the line is refused (rule `sandbox.missing`).
   */
  sandbox?: { mode: SandboxMode; active: boolean; description: string; network: string[]; warning?: string };
  /** Whether the profile asks a person before the tool (`bash`, `write`, or the dialect's database tool) runs this. */
  approval?: { required: boolean; reason?: string };
  /** Write, when allowed: the real path the write would land on. */
  realPath?: string;
  /** Read: the path decided (absolute, links resolved). */
  readPath?: string;
  /** Read, when allowed: how the shell's sandbox shows it (`sanitized`: a git config without its credential and program entries). */
  shown?: 'as-is' | 'sanitized';
  /** Write and read: the working directory the path was resolved against. */
  workingDir?: string;
  /** Write: the tool asked about (`write`, `edit` or `export_query`). */
  via?: WriteTool;
  /** Write: what the other writing tools would decide for the same path (so `readonly` shows that `export_query` may create a `.csv`). */
  otherTools?: { tool: WriteTool; allowed: boolean; rule: string }[];
  /** SQL: the dialect. */
  dialect?: SqlDialect;
  /** SQL: the kind of statement, when it was recognised. */
  statementType?: string;
}

function approvalOf(
  profile: PermissionProfile,
  tool: string,
  args: Record<string, unknown>,
): PolicyExplanation['approval'] {
  // The agent's own decision for rho's tool of that name (the toolset's tools are these).
  const approval = approvalPolicy(profile)({ name: tool }, args);
  return { required: approval.required, ...(approval.reason === undefined ? {} : { reason: approval.reason }) };
}

/**
 * Decide one shell command line, write path or SQL statement under a profile, and say why: the
 * backend of `rho policy check`. Never throws for a refused input; the result is JSON-serialisable.
 */
export async function explainPolicy(request: PolicyRequest): Promise<PolicyExplanation> {
  const { profile } = request;
  if ('shell' in request) {
    // The same working directory the bash tool would pass: file name patterns expand and `< FILE` resolves there.
    const decision = await checkShellCommand(request.shell, {
      profile,
      ...(request.workingDir === undefined ? {} : { cwd: resolve(request.workingDir) }),
    });
    // The restricted shell's own decision about the sandbox (restrictedShellGate calls the same).
    const status =
      profile.shell === 'restricted' ? sandboxStatus(profile, await sandboxWrapper(request.sandboxLookup)) : undefined;
    const refusal = decision.allowed && status?.refusal !== undefined ? status.refusal : undefined;
    const network =
      decision.allowed && status?.active && profile.network !== 'off'
        ? decision.plan.steps.flatMap((step) =>
            step.pipeline.filter(commandNeedsNetwork).map((command) => command.argv[command.programIndex ?? 0] ?? ''),
          )
        : [];
    return {
      kind: 'shell',
      profile: profile.name,
      input: request.shell,
      allowed: decision.allowed && refusal === undefined,
      rule: refusal === undefined ? decision.rule : 'sandbox.missing',
      ...(decision.allowed ? (refusal === undefined ? {} : { reason: refusal }) : { reason: decision.reason }),
      commands: decision.commands,
      ...(decision.allowed ? { plan: decision.plan } : {}),
      ...(status === undefined
        ? {}
        : {
            sandbox: {
              mode: status.mode,
              active: status.active,
              description: status.description,
              network,
              ...(status.warning === undefined ? {} : { warning: status.warning }),
            },
          }),
      approval: approvalOf(profile, 'bash', { command: request.shell }),
    };
  }
  if ('read' in request) {
    const workingDir = resolve(request.workingDir);
    // The very view the shell's sandbox mounts and the file tools decide on.
    const view = readView({
      profile,
      workingDir,
      ...(request.rhoHome === undefined ? {} : { rhoHome: request.rhoHome }),
      ...(request.sessionDir === undefined ? {} : { sessionDir: request.sessionDir }),
    });
    const path = resolve(workingDir, request.read);
    let real = path;
    try {
      real = realpathSync(path);
    } catch {
      // judged as written
    }
    const decisions = [...new Set([path, real])].map((candidate) => view.decide(candidate));
    const decision = decisions.find((candidate) => !candidate.allowed) ?? decisions.at(-1)!;
    return {
      kind: 'read',
      profile: profile.name,
      input: request.read,
      workingDir: view.workingDir,
      readPath: real,
      allowed: decision.allowed,
      rule: decision.rule,
      ...(decision.allowed
        ? { shown: decision.sanitized === undefined ? ('as-is' as const) : ('sanitized' as const) }
        : { reason: decision.reason }),
    };
  }
  if ('write' in request) {
    const workingDir = resolve(request.workingDir);
    const via = request.via ?? 'write';
    // The very function the tools call: the answer here is the answer there.
    const decide = (tool: WriteTool) =>
      checkWritePath(request.write, {
        profile,
        workingDir,
        writer: tool === 'export_query' ? 'export' : tool,
        ...(request.roots ? { roots: request.roots } : {}),
        ...(request.rhoHome === undefined
          ? {}
          : { hidden: [request.rhoHome, ...(request.sessionDir === undefined ? [] : [request.sessionDir])] }),
      });
    const decision = await decide(via);
    const others: NonNullable<PolicyExplanation['otherTools']> = [];
    for (const tool of WRITE_TOOLS.filter((candidate) => candidate !== via)) {
      const other = await decide(tool);
      others.push({ tool, allowed: other.allowed, rule: other.rule });
    }
    return {
      kind: 'write',
      profile: profile.name,
      input: request.write,
      workingDir,
      via,
      allowed: decision.allowed,
      rule: decision.rule,
      ...(decision.allowed ? { realPath: decision.realPath } : { reason: decision.reason }),
      // export_query's approval is the database tool's, which depends on the statement.
      ...(via === 'export_query' ? {} : { approval: approvalOf(profile, via, { path: request.write }) }),
      otherTools: others,
    };
  }
  const approval = approvalOf(profile, request.dialect, { sql: request.sql });
  if (profile.database === 'mutations') {
    return {
      kind: 'sql',
      profile: profile.name,
      input: request.sql,
      dialect: request.dialect,
      allowed: true,
      rule: 'database.mutations',
      approval,
    };
  }
  const decision = await checkSql(request.sql, request.dialect);
  return {
    kind: 'sql',
    profile: profile.name,
    input: request.sql,
    dialect: request.dialect,
    allowed: decision.allowed,
    rule: decision.rule,
    ...(decision.allowed ? {} : { reason: decision.reason }),
    ...(decision.statementType === undefined ? {} : { statementType: decision.statementType }),
    approval,
  };
}

function quoteWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Plain text for people (no colour): the decision, the rule, the reason, and what was parsed. */
export function formatPolicyExplanation(explanation: PolicyExplanation): string {
  const lines = [
    `${explanation.allowed ? 'ALLOWED' : 'REFUSED'} (${explanation.kind}, profile ${explanation.profile})`,
    `rule:     ${explanation.rule}`,
  ];
  if (explanation.reason !== undefined) lines.push(`reason:   ${explanation.reason}`);
  if (explanation.via !== undefined) lines.push(`tool:     ${explanation.via}`);
  if (explanation.otherTools !== undefined && explanation.otherTools.length > 0) {
    lines.push(
      `others:   ${explanation.otherTools.map((other) => `${other.tool} ${other.allowed ? 'allowed' : 'refused'} (${other.rule})`).join(', ')}`,
    );
  }
  if (explanation.realPath !== undefined) lines.push(`writes:   ${explanation.realPath}`);
  if (explanation.readPath !== undefined) lines.push(`path:     ${explanation.readPath}`);
  if (explanation.shown === 'sanitized')
    lines.push('shown:    without its credential and program entries (bash); the file tools do not read it');
  if (explanation.sandbox !== undefined) {
    const { sandbox } = explanation;
    const detail = sandbox.active
      ? `active: ${sandbox.description}, read-only, ${sandbox.network.length > 0 ? `network for ${sandbox.network.join(', ')} only` : 'no network'}`
      : sandbox.mode === 'off'
        ? 'off (the profile sets `sandbox: off`)'
        : 'missing (required by the profile)';
    lines.push(`sandbox:  ${detail}`);
  }
  if (explanation.dialect !== undefined) lines.push(`dialect:  ${explanation.dialect}`);
  if (explanation.statementType !== undefined) lines.push(`type:     ${explanation.statementType}`);
  if (explanation.approval !== undefined) {
    lines.push(
      `approval: ${explanation.approval.required ? `required${explanation.approval.reason === undefined ? '' : ` (${explanation.approval.reason})`}` : 'not required'}`,
    );
  }
  if (explanation.commands !== undefined && explanation.commands.length > 0) {
    lines.push('commands:');
    for (const argv of explanation.commands) lines.push(`  ${argv.map(quoteWord).join(' ')}`);
  }
  if (explanation.plan !== undefined && explanation.plan.steps.length > 0) {
    lines.push('runs:');
    for (const step of explanation.plan.steps) {
      const pipeline = step.pipeline
        .map((command) => {
          const redirects = [
            command.stdoutToDevNull ? '>/dev/null' : '',
            command.stderrToDevNull ? '2>/dev/null' : '',
            command.stderrToStdout ? '2>&1' : '',
          ].filter(Boolean);
          const environment = Object.entries(command.env ?? {}).map(([name, value]) => `${name}=${quoteWord(value)}`);
          return [...environment, ...command.argv.map(quoteWord), ...redirects].join(' ');
        })
        .join(' | ');
      lines.push(`  ${step.operator === 'start' ? '  ' : step.operator.padEnd(2)} ${pipeline}`);
    }
  }
  return lines.join('\n');
}
