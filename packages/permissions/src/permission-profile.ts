import { ConfigError } from '@rho/core';
import * as v from 'valibot';
import { MCP_DECISIONS, mcpPatternProblem, mcpReadOnlyProblem, type McpPermissions } from './mcp-rules.js';
import { formatBytes, parseByteSize, SANDBOX_LIMIT_KEYS, type SandboxLimits } from './sandbox-limits.js';

/** How the `bash` tool runs: `restricted` checks every command against the shell policy. */
export type ShellMode = 'restricted' | 'unrestricted';
/** What the file tools may write: nothing, new files only (exclusive create), or anything. */
export type FileWriteMode = 'off' | 'create-only' | 'full';
/** What the database tools may run: single reads only, or any statement. */
export type DatabaseMode = 'readonly' | 'mutations';
/**
 * Which tool calls need a person's approval: every call, the dangerous tools, the tools listed in
 * `requiredTools`, or none. Under `dangerous` and `granular`, a call whose arguments contain one of
 * `dangerousPatterns` also needs approval.
 */
export type ApprovalMode = 'all' | 'dangerous' | 'granular' | 'none';

/** The shell modes, in the order documentation lists them. */
export const SHELL_MODES: readonly ShellMode[] = ['restricted', 'unrestricted'];
/** The file write modes. */
export const FILE_WRITE_MODES: readonly FileWriteMode[] = ['off', 'create-only', 'full'];
/** The database modes. */
export const DATABASE_MODES: readonly DatabaseMode[] = ['readonly', 'mutations'];
/** The approval modes. */
export const APPROVAL_MODES: readonly ApprovalMode[] = ['all', 'dangerous', 'granular', 'none'];
/**
 * Whether restricted shell commands must run in the operating-system sandbox (`required`, the
 * default: refused when none is available) or run without one (`off`: a warning on every run).
 */
export type ProfileSandboxMode = 'required' | 'off';
/** The sandbox modes. */
export const SANDBOX_MODES: readonly ProfileSandboxMode[] = ['required', 'off'];
/**
 * Whether the shell's sandbox has the host's network: `off` (no process has it), `on` (the
 * developer shell has it; the restricted shell gives it to network programs only, as by default).
 */
export type NetworkMode = 'on' | 'off';
/** The network modes. */
export const NETWORK_MODES: readonly NetworkMode[] = ['on', 'off'];

/** Tools that need approval under the `dangerous` approval mode (the original's list). */
export const DEFAULT_DANGEROUS_TOOLS: readonly string[] = [
  'bash',
  'write',
  'edit',
  'oracle',
  'mysql',
  'sqlite',
  'vertica',
  'postgres',
  'delegate',
];

/** Argument fragments that make a call need approval under `dangerous` and `granular` (case-insensitive). */
export const DEFAULT_DANGEROUS_PATTERNS: readonly string[] = [
  'rm -rf',
  'rm -r',
  'DROP TABLE',
  'DROP DATABASE',
  'TRUNCATE',
  'DELETE FROM',
  '> /dev/',
  ':(){ :|:& };:',
  'mkfs',
  'dd if=',
];

/** A permission profile: what an agent may do. The YAML form is documented in the package README. */
export interface PermissionProfile {
  /** Profile name, shown in session metadata. */
  name: string;
  /** One-line description. */
  description: string;
  /** Shell mode of the `bash` tool. */
  shell: ShellMode;
  /** Write mode of the `write` and `edit` tools. */
  fileWrite: FileWriteMode;
  /** Mode of the database tools. */
  database: DatabaseMode;
  /**
   * PostgreSQL user-defined functions that readonly queries may call, directly or through
   * operators, casts and views (YAML `database_functions`): `name` or `schema.name`.
   */
  databaseFunctions?: string[];
  /** Approval mode. */
  approval: ApprovalMode;
  /** Tools needing approval under the `granular` mode (YAML `approval.required_tools`). */
  requiredTools: string[];
  /** Argument fragments that trigger approval under `dangerous` and `granular`. */
  dangerousPatterns: string[];
  /** Default timeout of a shell command, in seconds (YAML `shell_timeout`). */
  shellTimeoutSeconds: number;
  /** Working directory of shell commands; the session's working directory when absent. */
  shellWorkingDir?: string;
  /** Register only the `bash` tool (YAML `bash_only`). */
  bashOnly: boolean;
  /** Directories besides the working directory where writes are allowed (YAML `file_write.roots`). */
  writeRoots: string[];
  /**
   * The sandbox of shell commands (YAML `sandbox`); `required` when absent. Restricted commands
   * and, on this machine, an unrestricted shell (`developer`) run inside it; `off` runs them
   * without one (the built-in `unrestricted` profile).
   */
  sandbox?: ProfileSandboxMode;
  /**
   * Directories (or files) readable besides the working directory and the system directories
   * (YAML `read_paths`; `~` is the user's home, relative paths resolve against the working directory).
   */
  readPaths?: string[];
  /**
   * File names masked as secrets besides the defaults (`extra`), and secret-looking names that
   * are not (`allow`) (YAML `secret_files`): globs on the file name, or on the path relative to
   * the working directory when they contain a `/`.
   */
  secretFiles?: { extra: string[]; allow: string[] };
  /**
   * The network of the shell's sandbox (YAML `network`). Absent: the restricted shell gives it to
   * network programs (curl, wget) only, an unrestricted shell in the sandbox has none.
   */
  network?: NetworkMode;
  /** Decisions for MCP tools (YAML `mcp`); absent: every MCP tool asks (none under `approval: none`). */
  mcp?: McpPermissions;
  /**
   * Resource limits of each sandboxed command line (YAML `limits`: `pids`, `memory`, `cpu_seconds`,
   * `tmp_size`); what it does not set takes `DEFAULT_SANDBOX_LIMITS`.
   */
  limits?: Partial<SandboxLimits>;
  /**
   * Whether `export_query` may write CSV files (YAML `database_exports: on|off`). Absent: on when
   * the profile writes files (`fileWrite` is not `off`), off otherwise; see {@link databaseExportsEnabled}.
   */
  databaseExports?: boolean;
}

/**
 * Whether the profile lets `export_query` write a file: `database_exports` when the profile says,
 * otherwise only when it lets the file tools write (so `readonly` never writes one, `-y` or not).
 */
export function databaseExportsEnabled(profile: PermissionProfile): boolean {
  return profile.databaseExports ?? profile.fileWrite !== 'off';
}

function modeField<const T extends string>(field: string, allowed: readonly T[]) {
  const message = `must be one of ${allowed.join(', ')}`;
  return v.pipe(
    v.unknown(),
    // YAML 1.1 readers (and hand-written files) turn `off` into `false`: accept it as `off`.
    v.transform((value) => (value === false ? 'off' : value)),
    v.picklist(allowed as T[], (issue) => `${field} ${message} (got ${JSON.stringify(issue.input)})`),
  );
}

/** A section written either as a scalar mode or as a mapping with `mode` and more keys. */
function section<TEntries extends v.ObjectEntries>(field: string, entries: TEntries) {
  return v.pipe(
    v.unknown(),
    v.transform((value) =>
      typeof value === 'object' && value !== null && !Array.isArray(value) ? value : { mode: value },
    ),
    v.strictObject(entries, (issue) => unknownKeyMessage(field, issue, Object.keys(entries))),
  );
}

function unknownKeyMessage(section: string, issue: v.BaseIssue<unknown>, allowed: string[]): string {
  const key = issue.path?.at(-1)?.key;
  return `unknown key ${section ? `${section}.` : ''}${String(key)}; allowed keys: ${allowed.join(', ')}`;
}

// `name` or `schema.name`: no spaces, parentheses, quotes or further dots.
const FUNCTION_NAME = /^[^\s.()"']+(?:\.[^\s.()"']+)?$/;

const stringList = (field: string) =>
  v.array(v.string(`${field} must be a list of strings`), `${field} must be a list of strings`);

const mcpPatterns = (field: string) =>
  v.pipe(
    stringList(field),
    v.check(
      (patterns) => patterns.every((pattern) => mcpPatternProblem(pattern) === undefined),
      (issue) => {
        const bad = (issue.input as string[]).find((pattern) => mcpPatternProblem(pattern) !== undefined) ?? '';
        return `${field} pattern ${JSON.stringify(bad)} ${mcpPatternProblem(bad) ?? ''}`;
      },
    ),
  );

const wholeNumber = (field: string, max: number) =>
  v.pipe(
    v.number(`${field} must be a whole number`),
    v.integer(`${field} must be a whole number`),
    v.minValue(1, `${field} must be at least 1`),
    v.maxValue(max, `${field} must be at most ${max}`),
  );

const byteSize = (field: string, min: number) =>
  v.pipe(
    v.unknown(),
    v.transform((value) => parseByteSize(value) ?? value),
    v.number(
      (issue) =>
        `${field} must be a size: bytes, or a number with K, M, G or T (binary units), such as 512M (got ${JSON.stringify(issue.input)})`,
    ),
    v.minValue(min, `${field} must be at least ${formatBytes(min)}`),
  );

const topLevelEntries = {
  profile: v.optional(v.string('profile must be a string')),
  name: v.optional(v.string('name must be a string')),
  description: v.optional(v.nullable(v.string('description must be a string'))),
  shell: v.optional(section('shell', { mode: v.optional(modeField('shell.mode', SHELL_MODES)) })),
  file_write: v.optional(
    section('file_write', {
      mode: v.optional(modeField('file_write.mode', FILE_WRITE_MODES)),
      roots: v.optional(stringList('file_write.roots')),
    }),
  ),
  database: v.optional(section('database', { mode: v.optional(modeField('database.mode', DATABASE_MODES)) })),
  database_functions: v.optional(
    v.pipe(
      stringList('database_functions'),
      v.check(
        (names) => names.every((name) => FUNCTION_NAME.test(name)),
        (issue) =>
          `database_functions entry ${JSON.stringify((issue.input as string[]).find((name) => !FUNCTION_NAME.test(name)))} must be a function name or schema.name, as stored in the catalog (unquoted names in lower case), without arguments or spaces`,
      ),
    ),
  ),
  approval: v.optional(
    section('approval', {
      mode: v.optional(modeField('approval.mode', APPROVAL_MODES)),
      required_tools: v.optional(stringList('approval.required_tools')),
      dangerous_patterns: v.optional(stringList('approval.dangerous_patterns')),
    }),
  ),
  shell_timeout: v.optional(
    v.pipe(
      v.number('shell_timeout must be a number of seconds'),
      v.minValue(1, 'shell_timeout must be at least 1 second'),
      v.maxValue(86_400, 'shell_timeout must be at most 86400 seconds'),
    ),
  ),
  shell_working_dir: v.optional(v.nullable(v.string('shell_working_dir must be a string'))),
  bash_only: v.optional(v.boolean('bash_only must be true or false')),
  sandbox: v.optional(modeField('sandbox', SANDBOX_MODES)),
  limits: v.optional(
    v.strictObject(
      {
        pids: v.optional(wholeNumber('limits.pids', 1_000_000)),
        memory: v.optional(byteSize('limits.memory', 16 * 1024 * 1024)),
        cpu_seconds: v.optional(wholeNumber('limits.cpu_seconds', 86_400)),
        tmp_size: v.optional(byteSize('limits.tmp_size', 1024 * 1024)),
      },
      (issue) =>
        issue.path?.length
          ? unknownKeyMessage('limits', issue, [...SANDBOX_LIMIT_KEYS])
          : `limits must be a mapping with ${SANDBOX_LIMIT_KEYS.join(', ')}`,
    ),
  ),
  database_exports: v.optional(
    v.pipe(
      v.unknown(),
      // YAML 1.1 readers turn on/off into true/false: accept both spellings.
      v.transform((value) => (value === true ? 'on' : value === false ? 'off' : value)),
      v.picklist(['on', 'off'], (issue) => `database_exports must be on or off (got ${JSON.stringify(issue.input)})`),
    ),
  ),
  read_paths: v.optional(stringList('read_paths')),
  secret_files: v.optional(
    v.strictObject(
      { extra: v.optional(stringList('secret_files.extra')), allow: v.optional(stringList('secret_files.allow')) },
      (issue) =>
        issue.path?.length
          ? unknownKeyMessage('secret_files', issue, ['extra', 'allow'])
          : 'secret_files must be a mapping with extra and allow (lists of file name globs)',
    ),
  ),
  network: v.optional(
    v.pipe(
      v.unknown(),
      // YAML 1.1 readers turn `on`/`off` into booleans.
      v.transform((value) => (value === true ? 'on' : value)),
      modeField('network', NETWORK_MODES),
    ),
  ),
  mcp: v.optional(
    v.strictObject(
      {
        default: v.optional(modeField('mcp.default', MCP_DECISIONS)),
        allow: v.optional(mcpPatterns('mcp.allow')),
        ask: v.optional(mcpPatterns('mcp.ask')),
        deny: v.optional(mcpPatterns('mcp.deny')),
        read_only: v.optional(
          v.pipe(
            stringList('mcp.read_only'),
            v.check(
              (entries) => entries.every((entry) => mcpReadOnlyProblem(entry) === undefined),
              (issue) => {
                const bad = (issue.input as string[]).find((entry) => mcpReadOnlyProblem(entry) !== undefined) ?? '';
                return `mcp.read_only entry ${JSON.stringify(bad)} ${mcpReadOnlyProblem(bad) ?? ''}`;
              },
            ),
          ),
        ),
      },
      (issue) =>
        issue.path?.length
          ? unknownKeyMessage('mcp', issue, ['default', 'allow', 'ask', 'deny', 'read_only'])
          : 'mcp must be a mapping with default, allow, ask, deny and read_only',
    ),
  ),
};

const profileSchema = v.strictObject(topLevelEntries, (issue) =>
  unknownKeyMessage('', issue, Object.keys(topLevelEntries)),
);

function issuePath(issue: v.BaseIssue<unknown>): string {
  return (issue.path ?? []).map((item) => String(item.key)).join('.');
}

/**
 * Validate a parsed profile document (the YAML schema of the original, reference §3.5) and return
 * the profile. Throws a `ConfigError` naming the origin, the field and what is allowed.
 */
export function parseProfile(source: unknown, origin?: string): PermissionProfile {
  const where = origin ? `Profile ${origin}` : 'Profile';
  if (typeof source !== 'object' || source === null || Array.isArray(source)) {
    throw new ConfigError({
      message: `${where}: a profile must be a YAML mapping with keys such as profile, shell, file_write, database, approval.`,
      ...(origin ? { file: origin } : {}),
    });
  }
  const result = v.safeParse(profileSchema, source, { abortPipeEarly: true });
  if (!result.success) {
    const first = result.issues[0];
    const field = issuePath(first);
    throw new ConfigError({
      message: `${where}: ${first.message}.`,
      ...(origin ? { file: origin } : {}),
      field,
    });
  }
  const data = result.output;
  const approvalObject = data.approval;
  const fileWrite = data.file_write;
  const profile: PermissionProfile = {
    name: data.profile ?? data.name ?? 'custom',
    description: data.description ?? '',
    shell: data.shell?.mode ?? 'restricted',
    fileWrite: fileWrite?.mode ?? 'off',
    database: data.database?.mode ?? 'readonly',
    approval: approvalObject?.mode ?? 'dangerous',
    requiredTools: [...(approvalObject?.required_tools ?? DEFAULT_DANGEROUS_TOOLS)],
    dangerousPatterns: [...(approvalObject?.dangerous_patterns ?? DEFAULT_DANGEROUS_PATTERNS)],
    shellTimeoutSeconds: data.shell_timeout ?? 120,
    bashOnly: data.bash_only ?? false,
    writeRoots: [...(fileWrite?.roots ?? [])],
  };
  if (data.shell_working_dir) profile.shellWorkingDir = data.shell_working_dir;
  if (data.database_functions !== undefined) profile.databaseFunctions = [...data.database_functions];
  if (data.sandbox !== undefined) profile.sandbox = data.sandbox;
  if (data.limits !== undefined) {
    const limits: Partial<SandboxLimits> = {};
    if (data.limits.pids !== undefined) limits.pids = data.limits.pids;
    if (data.limits.memory !== undefined) limits.memoryBytes = data.limits.memory;
    if (data.limits.cpu_seconds !== undefined) limits.cpuSeconds = data.limits.cpu_seconds;
    if (data.limits.tmp_size !== undefined) limits.tmpBytes = data.limits.tmp_size;
    profile.limits = limits;
  }
  if (data.database_exports !== undefined) profile.databaseExports = data.database_exports === 'on';
  if (data.read_paths !== undefined) profile.readPaths = [...data.read_paths];
  if (data.secret_files !== undefined)
    profile.secretFiles = { extra: [...(data.secret_files.extra ?? [])], allow: [...(data.secret_files.allow ?? [])] };
  if (data.network !== undefined) profile.network = data.network;
  if (data.mcp !== undefined) {
    profile.mcp = {
      allow: [...(data.mcp.allow ?? [])],
      ask: [...(data.mcp.ask ?? [])],
      deny: [...(data.mcp.deny ?? [])],
    };
    if (data.mcp.default !== undefined) profile.mcp.default = data.mcp.default;
    if (data.mcp.read_only !== undefined) profile.mcp.readOnly = [...data.mcp.read_only];
  }
  return profile;
}

/** The YAML document form of a profile (snake_case, the original's `to_dict`). */
export function profileToDocument(profile: PermissionProfile): Record<string, unknown> {
  return {
    profile: profile.name,
    description: profile.description,
    shell: { mode: profile.shell },
    file_write:
      profile.writeRoots.length > 0
        ? { mode: profile.fileWrite, roots: profile.writeRoots }
        : { mode: profile.fileWrite },
    database: { mode: profile.database },
    ...(profile.databaseFunctions === undefined ? {} : { database_functions: profile.databaseFunctions }),
    approval: {
      mode: profile.approval,
      required_tools: profile.requiredTools,
      dangerous_patterns: profile.dangerousPatterns,
    },
    shell_timeout: profile.shellTimeoutSeconds,
    ...(profile.shellWorkingDir ? { shell_working_dir: profile.shellWorkingDir } : {}),
    bash_only: profile.bashOnly,
    ...(profile.sandbox === undefined ? {} : { sandbox: profile.sandbox }),
    ...(profile.limits === undefined
      ? {}
      : {
          limits: {
            ...(profile.limits.pids === undefined ? {} : { pids: profile.limits.pids }),
            ...(profile.limits.memoryBytes === undefined ? {} : { memory: profile.limits.memoryBytes }),
            ...(profile.limits.cpuSeconds === undefined ? {} : { cpu_seconds: profile.limits.cpuSeconds }),
            ...(profile.limits.tmpBytes === undefined ? {} : { tmp_size: profile.limits.tmpBytes }),
          },
        }),
    ...(profile.databaseExports === undefined ? {} : { database_exports: profile.databaseExports ? 'on' : 'off' }),
    ...(profile.readPaths === undefined ? {} : { read_paths: profile.readPaths }),
    ...(profile.secretFiles === undefined ? {} : { secret_files: profile.secretFiles }),
    ...(profile.network === undefined ? {} : { network: profile.network }),
    ...(profile.mcp === undefined
      ? {}
      : {
          mcp: {
            ...(profile.mcp.default === undefined ? {} : { default: profile.mcp.default }),
            allow: profile.mcp.allow,
            ask: profile.mcp.ask,
            deny: profile.mcp.deny,
            ...(profile.mcp.readOnly === undefined ? {} : { read_only: profile.mcp.readOnly }),
          },
        }),
  };
}
