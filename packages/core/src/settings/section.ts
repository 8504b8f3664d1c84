import type { GenericSchema } from 'valibot';
import type { ConfigError } from '../errors.js';

/**
 * The two files a setting may be written in: `$RHO_HOME/config.yaml` (`home`: the person's
 * settings, read on every run and resume) and an agent config (`agent`: `--config agent.yaml`,
 * or a resumed session's saved `config.yaml`, which takes its place).
 */
export type SettingsFile = 'home' | 'agent';

/** Where a value came from, lowest precedence first. */
export type SettingLayerKind = 'default' | 'home' | 'agent' | 'saved' | 'env' | 'flag';

/**
 * One setting: its YAML key (a path such as `budgets.max_turns`, or a name that is no file's key
 * for a setting only the environment or a flag gives), the files that accept it, its environment
 * variables, its flag, its schema and default.
 */
export interface SettingDefinition {
  /** The YAML key path (`model`, `budgets.max_turns`); for `files: []`, the setting's name. */
  readonly key: string;
  /** One line for `rho config show` and docs/settings.md. */
  readonly description: string;
  /** The files that accept the key (default `['agent']`; `[]`: only the environment or a flag). */
  readonly files?: readonly SettingsFile[];
  /**
   * Validates a file's value, and an environment variable's or a flag's after {@link text}. Its
   * messages say what is expected (`a positive number of seconds`): they become
   * `FILE:LINE: 'KEY' must be … (got …).`, `--flag must be …, HINT (got "…").` and
   * `VARIABLE must be …, HINT (got "…").`
   */
  readonly schema: GenericSchema;
  /** Environment variables, the first that is set counts (rho's own, then rho-agent's `RHO_AGENT_*`). */
  readonly env?: readonly string[];
  /**
   * Standard variables other programs also read, which count only below the files (the
   * OpenTelemetry exporter's): a shell that exports them for other tools does not override rho's files.
   */
  readonly fallbackEnv?: readonly string[];
  /** The flag, as the overrides object names it and as typed without its dashes (`max-turns`). */
  readonly flag?: string;
  /** Turns the text of a variable or a flag into the schema's input (a number, a list). Default: the text. */
  readonly text?: (text: string) => unknown;
  /**
   * A flag given an empty value (`--max-turns ''`): `error` (`--max-turns needs a value.`),
   * `unset` (as if not given) or `value` (the empty text is the value). Default `value`.
   */
  readonly emptyFlag?: 'error' | 'unset' | 'value';
  /** Added to the message of a bad variable or flag (`for example 300`). */
  readonly hint?: string;
  /** The value when no source sets it. */
  readonly default?: unknown;
  /** How the default reads in docs when it is not a plain value (`the current directory`). */
  readonly defaultText?: string;
  /** The value is a credential: collected as a secret (kept from the model, the trace and config.yaml) and never shown. */
  readonly secret?: boolean;
  /**
   * Precedence exception: an agent config's value (`--config`) beats the environment. Set where an
   * existing decision or test keeps the file over the variable; {@link why} says which.
   */
  readonly configBeatsEnv?: boolean;
  /**
   * Precedence exception: a resumed session keeps its saved value over the environment (only a
   * flag changes it), so a resume runs as the session ran.
   */
  readonly pinned?: boolean;
  /** Why this setting's precedence differs from the documented one (docs/settings.md). */
  readonly why?: string;
  /** The layers merge rather than the highest replacing the others; the section reads them all. */
  readonly merge?: boolean;
  /**
   * What a new session's `config.yaml` keeps of it: `explicit` (the value the agent config or a
   * flag gave, default for agent-config keys), `resolved` (the value the run used, whatever
   * gave it), `never` (default for keys of no agent config).
   */
  readonly save?: 'explicit' | 'resolved' | 'never';
}

/** A value of one setting from one source, validated. */
export interface SettingLayer {
  readonly kind: SettingLayerKind;
  /** The validated value (the schema's output). */
  readonly value: unknown;
  /** As read (the text of a variable or flag, the file's value). */
  readonly raw: unknown;
  /** How `sources` names it: `default`, `FILE:LINE`, `env NAME`, `--flag`. */
  readonly origin: string;
  /** The variable's name (`env`), the flag (`flag`, with its dashes), the file (file layers). */
  readonly name: string;
}

/** What a section's {@link SettingsSection.build} is given. */
export interface SectionContext {
  /** The winning value of one of the section's settings (undefined when no source sets it). */
  value<T = unknown>(key: string): T | undefined;
  /** The layer that won for a setting. */
  winner(key: string): SettingLayer | undefined;
  /** Every layer of a setting, lowest precedence first (for merged settings). */
  layers(key: string): readonly SettingLayer[];
  /** The value of a section built before this one. */
  section<T = unknown>(name: string): T;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `$RHO_HOME`. */
  readonly home: string;
  /** The directory relative paths of flags resolve against. */
  readonly cwd: string;
  /** `$RHO_HOME/config.yaml`'s path. */
  readonly homeFile: string;
  /** The agent config's file (or the resumed session's `config.yaml`), if any. */
  readonly agentFile: string | undefined;
  /** The directory the agent config's relative paths resolve from (a resumed session's own). */
  readonly agentDirectory: string | undefined;
  /** Whether the agent config is a resumed session's saved settings. */
  readonly resumed: boolean;
  /** A warning for the user (printed by the caller). */
  warn(message: string): void;
  /** A secret rho now knows (an inline password, a resolved token), named for its marker. */
  secret(name: string, value: string, minimumLength?: number): void;
  /**
   * The value a section chose for a setting no source set, or only its default (the current
   * directory, a profile's default backend), so that `values` and `sources` show it; `origin`
   * says why. `override`: also over a value a source set (the section did not use it as given).
   */
  derived(key: string, value: unknown, origin: string, options?: { override?: boolean }): void;
  /** The password of a URL rho now knows (an MCP server's), as a secret. */
  secretUrl(url: string): void;
  /**
   * The error for a setting's value, where it came from: `FILE:LINE: 'KEY' MESSAGE (got …).`,
   * `--flag MESSAGE (got "…").` or `VARIABLE MESSAGE (got "…").`
   */
  problem(key: string, message: string): ConfigError;
}

/** A nested mapping whose keys are settings (`budgets:`, `otel:`), and what an unknown key in it is. */
export interface SettingsMapping {
  readonly key: string;
  /** An unknown key inside: `error` (a typo would silently lift a limit) or `warn`. */
  readonly unknownKeys: 'error' | 'warn';
}

/**
 * The settings a feature owns, declared by the package that owns the feature: its keys,
 * variables, flags, schemas and defaults, and how its typed value is built from them.
 */
export interface SettingsSection<Name extends string = string, Value = unknown> {
  readonly name: Name;
  /** The package that owns it (docs/settings.md). */
  readonly owner: string;
  readonly description: string;
  readonly settings: readonly SettingDefinition[];
  readonly mappings?: readonly SettingsMapping[];
  /** Names people reach for that mean one of the section's keys (`tools` → `tool_packages`), for "did you mean". */
  readonly aliases?: Readonly<Record<string, string>>;
  /** The section's typed value. */
  build(context: SectionContext): Value | Promise<Value>;
  /** The section's keys in a new session's `config.yaml`; default: each setting by its `save` rule. */
  save?(context: SectionContext, value: Value): Record<string, unknown>;
}

// `any` for the value: a list of sections holds sections of different values.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnySettingsSection = SettingsSection<string, any>;

/** The typed settings of a list of sections: each section's value under its name. */
export type SettingsOf<Sections extends readonly AnySettingsSection[]> = {
  readonly [Section in Sections[number] as Section['name']]: Section extends SettingsSection<string, infer Value>
    ? Value
    : never;
};

/** Declares a section (typed: its name and value are kept for {@link SettingsOf}). */
export function defineSettingsSection<const Name extends string, Value>(
  section: SettingsSection<Name, Value>,
): SettingsSection<Name, Value> {
  return section;
}
