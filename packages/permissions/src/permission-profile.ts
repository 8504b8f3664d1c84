import { configSource, validateConfig, type ConfigSource } from '@rho/core/internal';
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

function modeField<const T extends string>(allowed: readonly T[]) {
  return v.pipe(
    v.unknown(),
    // YAML 1.1 readers (and hand-written files) turn `off` into `false`: accept it as `off`.
    v.transform((value) => (value === false ? 'off' : value)),
    v.picklist(allowed as T[], `must be one of ${allowed.join(', ')}`),
  );
}

/** A mapping of known keys: an unknown key names the keys allowed; anything else says what the mapping holds. */
function mapping<TEntries extends v.ObjectEntries>(entries: TEntries, notAMapping: string) {
  return v.pipe(
    v.unknown(),
    // A YAML list is an object too, to valibot: refuse it as what it is.
    v.check((value) => !Array.isArray(value), notAMapping),
    v.strictObject(entries, (issue) =>
      issue.path?.length ? `is an unknown key; allowed keys: ${Object.keys(entries).join(', ')}` : notAMapping,
    ),
  );
}

/** A section written either as a scalar mode or as a mapping with `mode` and more keys. */
function section<TEntries extends v.ObjectEntries>(entries: TEntries) {
  return v.pipe(
    v.unknown(),
    v.transform((value) =>
      typeof value === 'object' && value !== null && !Array.isArray(value) ? value : { mode: value },
    ),
    mapping(entries, `must be a mode or a mapping with ${Object.keys(entries).join(', ')}`),
  );
}

// `name` or `schema.name`: no spaces, parentheses, quotes or further dots.
const FUNCTION_NAME = /^[^\s.()"']+(?:\.[^\s.()"']+)?$/;

const stringList = () => v.array(v.string('must be a string'), 'must be a list of strings');

/** A list of strings, each checked by `problem` (a sentence starting with a verb, or undefined). */
const checkedList = (problem: (entry: string) => string | undefined) =>
  v.array(
    v.pipe(
      v.string('must be a string'),
      v.check(
        (entry) => problem(entry) === undefined,
        (issue) => problem(issue.input as string) ?? '',
      ),
    ),
    'must be a list of strings',
  );

const wholeNumber = (max: number) =>
  v.pipe(
    v.number('must be a whole number'),
    v.integer('must be a whole number'),
    v.minValue(1, 'must be at least 1'),
    v.maxValue(max, `must be at most ${max}`),
  );

const byteSize = (min: number) =>
  v.pipe(
    v.unknown(),
    v.transform((value) => parseByteSize(value) ?? value),
    v.number('must be a size: bytes, or a number with K, M, G or T (binary units), such as 512M'),
    v.minValue(min, `must be at least ${formatBytes(min)}`),
  );

const onOff = v.pipe(
  v.unknown(),
  // YAML 1.1 readers turn on/off into true/false: accept both spellings.
  v.transform((value) => (value === true ? 'on' : value === false ? 'off' : value)),
  v.picklist(['on', 'off'], 'must be on or off'),
);

const topLevelEntries = {
  profile: v.optional(v.string('must be a string')),
  name: v.optional(v.string('must be a string')),
  description: v.optional(v.nullable(v.string('must be a string'))),
  shell: v.optional(section({ mode: v.optional(modeField(SHELL_MODES)) })),
  file_write: v.optional(
    section({
      mode: v.optional(modeField(FILE_WRITE_MODES)),
      roots: v.optional(stringList()),
    }),
  ),
  database: v.optional(section({ mode: v.optional(modeField(DATABASE_MODES)) })),
  database_functions: v.optional(
    checkedList((name) =>
      FUNCTION_NAME.test(name)
        ? undefined
        : 'must be a function name or schema.name, as stored in the catalog (unquoted names in lower case), without arguments or spaces',
    ),
  ),
  approval: v.optional(
    section({
      mode: v.optional(modeField(APPROVAL_MODES)),
      required_tools: v.optional(stringList()),
      dangerous_patterns: v.optional(stringList()),
    }),
  ),
  shell_timeout: v.optional(
    v.pipe(
      v.number('must be a number of seconds'),
      v.minValue(1, 'must be at least 1 second'),
      v.maxValue(86_400, 'must be at most 86400 seconds'),
    ),
  ),
  shell_working_dir: v.optional(v.nullable(v.string('must be a string'))),
  bash_only: v.optional(v.boolean('must be true or false')),
  sandbox: v.optional(modeField(SANDBOX_MODES)),
  limits: v.optional(
    mapping(
      {
        pids: v.optional(wholeNumber(1_000_000)),
        memory: v.optional(byteSize(16 * 1024 * 1024)),
        cpu_seconds: v.optional(wholeNumber(86_400)),
        tmp_size: v.optional(byteSize(1024 * 1024)),
      },
      `must be a mapping with ${SANDBOX_LIMIT_KEYS.join(', ')}`,
    ),
  ),
  database_exports: v.optional(onOff),
  read_paths: v.optional(stringList()),
  secret_files: v.optional(
    mapping(
      { extra: v.optional(stringList()), allow: v.optional(stringList()) },
      'must be a mapping with extra and allow (lists of file name globs)',
    ),
  ),
  network: v.optional(
    v.pipe(
      v.unknown(),
      // YAML 1.1 readers turn `on`/`off` into booleans.
      v.transform((value) => (value === true ? 'on' : value)),
      modeField(NETWORK_MODES),
    ),
  ),
  mcp: v.optional(
    mapping(
      {
        default: v.optional(modeField(MCP_DECISIONS)),
        allow: v.optional(checkedList(mcpPatternProblem)),
        ask: v.optional(checkedList(mcpPatternProblem)),
        deny: v.optional(checkedList(mcpPatternProblem)),
        read_only: v.optional(checkedList(mcpReadOnlyProblem)),
      },
      'must be a mapping with default, allow, ask, deny and read_only',
    ),
  ),
};

const profileSchema = mapping(
  topLevelEntries,
  'must be a YAML mapping with keys such as profile, shell, file_write, database, approval',
);

/**
 * Validate a parsed profile document (the YAML schema of the original, reference §3.5) and return
 * the profile. `origin` names where it came from: a file path, or the document read with
 * `readConfigFile`/`parseConfigText` of `@rho/core/internal` (then messages give the line too).
 *
 * @throws ConfigError `FILE:LINE: 'KEY' must be ... (got ...).`, naming the file, the key and the
 * line (a profile made in code is `Profile`, without a line).
 */
export function parseProfile(
  document: unknown,
  origin?: string | Pick<ConfigSource, 'file' | 'lineOf'>,
): PermissionProfile {
  const source = typeof origin === 'object' ? origin : configSource(document, origin ?? 'Profile');
  const data = validateConfig(profileSchema, document, source);
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
