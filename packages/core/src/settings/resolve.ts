import { dirname, join, resolve as resolvePath } from 'node:path';
import * as v from 'valibot';
import type { ConfigSource } from '../config-file.js';
import { configLocation, configProblem, readConfigFile, validateConfig } from '../config-file.js';
import { ConfigError } from '../errors.js';
import type { NamedSecret, SecretRedactor } from '../secret-redaction.js';
import { createSecretRedactor } from '../secret-redaction.js';
import { isMapping } from './kinds.js';
import { SecretCollector } from './known-secrets.js';
import type { SavedSettings } from './saved-settings.js';
import type {
  AnySettingsSection,
  SectionContext,
  SettingDefinition,
  SettingLayer,
  SettingLayerKind,
  SettingsFile,
  SettingsOf,
} from './section.js';
import type { IndexedSetting, SettingsIndex } from './settings-index.js';
import { checkFileKeys, indexSettings, setAt, valueAt } from './settings-index.js';
export { valueAt } from './settings-index.js';

/** What {@link resolveSettings} resolves from. */
export interface ResolveSettingsOptions<Sections extends readonly AnySettingsSection[]> {
  /** The sections to build, in order (a section may read those before it). */
  sections: Sections;
  /**
   * Sections whose keys are known but not built here (the product's other sections), so that
   * their keys in the files are not "unknown". Default: none beyond `sections`.
   */
  knownSections?: readonly AnySettingsSection[];
  /** `$RHO_HOME`: its `config.yaml` is read (a missing file is an empty one). */
  home: string;
  /** The environment (never changed). */
  env: Readonly<Record<string, string | undefined>>;
  /** Where relative paths of flags resolve (default the process's working directory). */
  cwd?: string;
  /** The agent config: a path (read; it must exist) or a document already read. */
  agentConfig?: ConfigSource | string;
  /** A resumed session's saved settings: they take the agent config's place. */
  resumed?: SavedSettings;
  /** The flags, by flag name without dashes (`max-turns`), as typed; undefined values are not given. */
  overrides?: Readonly<Record<string, unknown>>;
}

/** What {@link resolveSettings} returns. */
export interface ResolvedSettings<Sections extends readonly AnySettingsSection[]> {
  /** Each section's typed value under its name. */
  readonly settings: SettingsOf<Sections>;
  /** Where each set key's value came from: `default`, `FILE:LINE`, `env NAME`, `--flag` (merged keys: joined by ` + `). */
  readonly sources: Readonly<Record<string, string>>;
  /** Every key's value as resolved (a merged key's layers merged), for `rho config show`; unset keys are absent. */
  readonly values: Readonly<Record<string, unknown>>;
  /** What the user should know (unknown keys with "did you mean", notices), to be printed by the caller. */
  readonly warnings: readonly string[];
  /** Every secret rho knows for this run, collected once. */
  readonly secrets: readonly NamedSecret[];
  /** The redactor of {@link secrets}. */
  readonly redactor: SecretRedactor;
  /** What a new session's `config.yaml` keeps (before redaction; see `writeSessionSettings`). */
  readonly saved: Record<string, unknown>;
  /** The files read. */
  readonly files: { readonly home?: ConfigSource; readonly agent?: ConfigSource };
}

/** Precedence of each kind of layer (higher wins), before the per-setting exceptions. */
const RANK: Record<SettingLayerKind | 'fallback', number> = {
  default: 0,
  fallback: 1,
  home: 2,
  agent: 3,
  saved: 3,
  env: 4,
  flag: 6,
};

interface Layer extends SettingLayer {
  readonly rank: number;
  /** The file a file layer came from, for its problems. */
  readonly source?: ConfigSource;
}

/**
 * Resolves every setting of `sections` once, with one precedence: defaults <
 * `$RHO_HOME/config.yaml` < the agent config (or a resumed session's saved settings) < the
 * environment < flags, except where a setting declares otherwise (`configBeatsEnv`, `pinned`,
 * `fallbackEnv`, `merge`); then builds each section's typed value. Every value is validated by
 * its setting's schema, so an error names the file, the key and the line (or the variable, or the
 * flag). Keys no section knows are warnings with "did you mean" from the one list of all keys.
 *
 * @throws ConfigError for an unreadable or invalid file, a bad value, or a section that refuses
 * what it was given.
 */
export async function resolveSettings<const Sections extends readonly AnySettingsSection[]>(
  options: ResolveSettingsOptions<Sections>,
): Promise<ResolvedSettings<Sections>> {
  const env = options.env;
  const cwd = options.cwd ?? process.cwd();
  const overrides = options.overrides ?? {};
  const warnings: string[] = [];
  const homeFile = join(options.home, 'config.yaml');
  const homeSource = mappingSource(readConfigFile(homeFile), 'home');
  const agentSource = mappingSource(readAgent(options), 'agent');
  const agentKind: 'agent' | 'saved' = options.resumed === undefined ? 'agent' : 'saved';

  const index = indexSettings([...options.sections, ...(options.knownSections ?? [])]);
  const extras = checkFileKeys(index, { home: homeSource, agent: agentSource }, options.sections, warnings);

  const layersByKey = new Map<string, Layer[]>();
  for (const setting of index.settings.values()) {
    if (!options.sections.includes(setting.section)) continue;
    layersByKey.set(
      setting.definition.key,
      collectLayers(setting, { homeSource, agentSource, agentKind, env, overrides }),
    );
  }

  const built = new Map<string, unknown>();
  const named: { name: string; value: string; minimumLength?: number }[] = [];
  const urls: string[] = [];
  const derived = new Map<string, { value: unknown; origin: string; override: boolean }>();
  const winner = (key: string): Layer | undefined => {
    const layers = layersByKey.get(key);
    if (layers === undefined) throw new Error(`No setting '${key}' in the sections resolved.`);
    return layers[layers.length - 1];
  };
  const context: SectionContext = {
    value: <T>(key: string) => winner(key)?.value as T | undefined,
    winner,
    layers: (key) => {
      winner(key);
      return layersByKey.get(key)!;
    },
    section: <T>(name: string) => {
      if (!built.has(name)) throw new Error(`The settings section '${name}' is not built before this one.`);
      return built.get(name) as T;
    },
    env,
    home: options.home,
    cwd,
    homeFile,
    agentFile: agentSource?.file,
    agentDirectory:
      options.resumed !== undefined
        ? options.resumed.directory
        : agentSource === undefined
          ? undefined
          : dirname(agentSource.file),
    resumed: options.resumed !== undefined,
    warn: (message) => warnings.push(message),
    secret: (name, value, minimumLength) =>
      named.push({ name, value, ...(minimumLength === undefined ? {} : { minimumLength }) }),
    secretUrl: (url) => urls.push(url),
    derived: (key, value, origin, derivedOptions) => {
      winner(key);
      derived.set(key, { value, origin, override: derivedOptions?.override === true });
    },
    problem: (key, message) => problemAt(winner(key), index.settings.get(key)!, message),
  };
  for (const section of options.sections) built.set(section.name, await section.build(context));

  const sources: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  for (const [key, layers] of layersByKey) {
    const top = layers[layers.length - 1];
    const chosen = derived.get(key);
    // What the section made of a default (or, when it says so, of any value) is what it shows.
    if (chosen !== undefined && (top === undefined || top.kind === 'default' || chosen.override)) {
      values[key] = chosen.value;
      sources[key] = chosen.origin;
      continue;
    }
    if (top === undefined) continue;
    const setting = index.settings.get(key)!;
    values[key] = setting.definition.merge === true ? merged(layers) : top.value;
    const shown = setting.definition.merge === true ? layers.filter((layer) => layer.kind !== 'default') : [top];
    sources[key] = (shown.length === 0 ? [top] : shown).map((layer) => layer.origin).join(' + ');
  }

  let saved: Record<string, unknown> = {};
  for (const section of options.sections) {
    const value = built.get(section.name);
    const part = section.save?.(context, value) ?? defaultSave(section, layersByKey, index);
    saved = { ...saved, ...part };
  }
  saved = { ...saved, ...extras };

  const collector = new SecretCollector();
  collector.environment(env);
  for (const setting of index.settings.values()) {
    if (setting.definition.secret !== true) continue;
    const top = layersByKey.get(setting.definition.key)?.at(-1);
    // A variable of a secret's name is already taken by the environment's rule.
    if (top !== undefined && top.kind !== 'env' && typeof top.value === 'string')
      collector.take(setting.definition.key, top.value);
  }
  for (const { name, value, minimumLength } of named) collector.take(name, value, minimumLength);
  for (const url of urls) collector.urlPassword(url);
  for (const value of Object.values(overrides))
    for (const item of [value].flat()) if (typeof item === 'string') collector.urlPassword(item);
  // Last: a value named above (resolved) keeps that name.
  if (homeSource !== undefined) collector.document(homeSource.value);
  if (agentSource !== undefined) collector.document(agentSource.value);
  const secrets = collector.secrets;

  return {
    settings: Object.fromEntries(built) as SettingsOf<Sections>,
    sources,
    values,
    warnings,
    secrets,
    redactor: createSecretRedactor(secrets),
    saved,
    files: {
      ...(homeSource === undefined ? {} : { home: homeSource }),
      ...(agentSource === undefined ? {} : { agent: agentSource }),
    },
  };
}

function collectLayers(
  setting: IndexedSetting,
  inputs: {
    homeSource: ConfigSource | undefined;
    agentSource: ConfigSource | undefined;
    agentKind: 'agent' | 'saved';
    env: Readonly<Record<string, string | undefined>>;
    overrides: Readonly<Record<string, unknown>>;
  },
): Layer[] {
  const { definition, path, files } = setting;
  const layers: Layer[] = [];
  if (definition.default !== undefined)
    layers.push({
      kind: 'default',
      value: definition.default,
      raw: definition.default,
      origin: 'default',
      name: 'default',
      rank: RANK.default,
    });
  const fromFile = (source: ConfigSource | undefined, kind: 'home' | 'agent' | 'saved') => {
    if (source === undefined) return;
    const raw = valueAt(source.value, path);
    if (raw === undefined || raw === null) return;
    const value = validateConfig(definition.schema, raw, source, path);
    // The exceptions: an agent config's value over the environment, a resumed session's saved one.
    const aboveEnv =
      (kind === 'agent' && definition.configBeatsEnv === true) || (kind === 'saved' && definition.pinned === true);
    const rank = aboveEnv ? RANK.env + 1 : RANK[kind];
    layers.push({ kind, value, raw, origin: configLocation(source, path), name: source.file, rank, source });
  };
  const fromEnv = (names: readonly string[] | undefined, rank: number) => {
    for (const name of names ?? []) {
      const raw = inputs.env[name];
      if (raw === undefined || raw.trim() === '') continue;
      layers.push({ kind: 'env', value: checkText(definition, raw, name), raw, origin: `env ${name}`, name, rank });
      return;
    }
  };
  fromEnv(definition.fallbackEnv, RANK.fallback);
  if (files.includes('home')) fromFile(inputs.homeSource, 'home');
  if (files.includes('agent')) fromFile(inputs.agentSource, inputs.agentKind);
  fromEnv(definition.env, RANK.env);
  if (definition.flag !== undefined) {
    const flag = `--${definition.flag}`;
    const raw = inputs.overrides[definition.flag];
    const empty = typeof raw === 'string' && raw.trim() === '';
    const skip =
      raw === undefined || (Array.isArray(raw) && raw.length === 0) || (empty && definition.emptyFlag === 'unset');
    if (!skip) {
      if (empty && definition.emptyFlag === 'error')
        throw new ConfigError({ message: `${flag} needs a value.`, field: definition.key });
      layers.push({
        kind: 'flag',
        value: checkText(definition, raw, flag),
        raw,
        origin: flag,
        name: flag,
        rank: RANK.flag,
      });
    }
  }
  // Stable: among equal ranks the later (a flag after a variable) wins.
  return layers
    .map((layer, order) => ({ layer, order }))
    .sort((a, b) => a.layer.rank - b.layer.rank || a.order - b.order)
    .map(({ layer }) => layer);
}

/** A variable's or flag's value: its text read, then validated, or an error naming it. */
function checkText(definition: SettingDefinition, raw: unknown, name: string): unknown {
  const input =
    typeof raw === 'string'
      ? definition.text === undefined
        ? raw
        : definition.text(raw)
      : Array.isArray(raw) && definition.text !== undefined
        ? raw.flatMap((item) => [definition.text!(String(item))].flat())
        : raw;
  const result = v.safeParse(definition.schema, input, { abortPipeEarly: true });
  if (result.success) return result.output;
  const issue = result.issues[0];
  const message = expected(issue.message);
  const hint = definition.hint === undefined || message.includes('for example') ? '' : `, ${definition.hint}`;
  const shownValue =
    typeof raw === 'string' ? raw : typeof issue.input === 'string' ? issue.input : JSON.stringify(issue.input);
  const got = /\(got /.test(message) ? '' : ` (got ${JSON.stringify(shownValue)})`;
  throw new ConfigError({ message: `${name} ${message}${hint}${got}.`, field: definition.key });
}

/** A schema's message as the rest of a sentence after the key: `must be …` (as `validateConfig` words it). */
function expected(message: string): string {
  if (message.startsWith('Invalid ')) return `is invalid: ${message}`;
  return /^(must|is|has|needs|names|cannot|may|takes)\b/.test(message) ? message : `must be ${message}`;
}

function problemAt(layer: Layer | undefined, setting: IndexedSetting, message: string): ConfigError {
  const sentence = expected(message);
  if (layer?.source !== undefined) return configProblem(layer.source, setting.path, sentence, { value: layer.raw });
  const name = layer === undefined || layer.kind === 'default' ? `'${setting.definition.key}'` : layer.name;
  const got =
    layer === undefined || layer.kind === 'default' || /\(got /.test(sentence)
      ? ''
      : ` (got ${JSON.stringify(typeof layer.raw === 'string' ? layer.raw : layer.raw)})`;
  return new ConfigError({ message: `${name} ${sentence}${got}.`, field: setting.definition.key });
}

/** A section's keys in a new session's `config.yaml`, by each setting's `save` rule. */
function defaultSave(
  section: AnySettingsSection,
  layersByKey: ReadonlyMap<string, readonly Layer[]>,
  index: SettingsIndex,
): Record<string, unknown> {
  const document: Record<string, unknown> = {};
  for (const definition of section.settings) {
    const files = index.settings.get(definition.key)!.files;
    const rule = definition.save ?? (files.includes('agent') ? 'explicit' : 'never');
    if (rule === 'never') continue;
    const layers = layersByKey.get(definition.key) ?? [];
    const layer =
      rule === 'resolved'
        ? layers.at(-1)
        : layers.filter((item) => item.kind === 'agent' || item.kind === 'saved' || item.kind === 'flag').at(-1);
    if (layer === undefined) continue;
    setAt(document, definition.key.split('.'), layer.value);
  }
  return document;
}

function readAgent<Sections extends readonly AnySettingsSection[]>(
  options: ResolveSettingsOptions<Sections>,
): ConfigSource | undefined {
  if (options.resumed !== undefined) return options.resumed.source;
  if (options.agentConfig === undefined) return undefined;
  if (typeof options.agentConfig !== 'string') return options.agentConfig;
  const path = resolvePath(options.cwd ?? process.cwd(), options.agentConfig);
  const source = readConfigFile(path);
  if (source === undefined) throw new ConfigError({ message: `Config file not found: ${path}`, file: path });
  return source;
}

function mappingSource(source: ConfigSource | undefined, kind: SettingsFile): ConfigSource | undefined {
  if (source === undefined || source.value === null || source.value === undefined) return source;
  if (!isMapping(source.value))
    throw new ConfigError({
      message:
        kind === 'home'
          ? `${source.file} must contain a YAML mapping (for example mcp_servers: ...).`
          : `Config file must contain a YAML mapping: ${source.file}`,
      file: source.file,
    });
  return source;
}

/** A merged setting's value: mappings merged key by key, lists one after the other, the highest layer on top. */
function merged(layers: readonly Layer[]): unknown {
  const given = layers.filter((layer) => layer.kind !== 'default');
  if (given.length > 0 && given.every((layer) => isMapping(layer.value)))
    return Object.assign({}, ...given.map((layer) => layer.value as Record<string, unknown>));
  if (given.length > 0 && given.every((layer) => Array.isArray(layer.value)))
    return given.flatMap((layer) => layer.value as unknown[]);
  return layers.at(-1)?.value;
}
