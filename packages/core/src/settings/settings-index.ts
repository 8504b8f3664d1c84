import * as v from 'valibot';
import type { ConfigPath, ConfigSource } from '../config-file.js';
import { configLocation, configProblem, validateConfig } from '../config-file.js';
import { isMapping } from './kinds.js';
import type { AnySettingsSection, SettingDefinition, SettingsFile } from './section.js';
import { suggestKey } from './suggest.js';

/** A setting of a resolution, with its section and where files may set it. */
export interface IndexedSetting {
  readonly section: AnySettingsSection;
  readonly definition: SettingDefinition;
  readonly path: string[];
  readonly files: readonly SettingsFile[];
}

/** The top-level keys of a list of sections, the files that accept each, and every setting by key. */
export interface SettingsIndex {
  readonly settings: Map<string, IndexedSetting>;
  /** Top-level YAML key → the files that accept it, and its mapping rule when it is a mapping of settings. */
  readonly topKeys: Map<
    string,
    { files: Set<SettingsFile>; children: Set<string>; owners: Set<AnySettingsSection>; unknownKeys?: 'error' | 'warn' }
  >;
  readonly aliases: Record<string, string>;
}

export function indexSettings(sections: readonly AnySettingsSection[]): SettingsIndex {
  const settings = new Map<string, IndexedSetting>();
  const topKeys: SettingsIndex['topKeys'] = new Map();
  const aliases: Record<string, string> = {};
  for (const section of new Set(sections)) {
    Object.assign(aliases, section.aliases ?? {});
    for (const definition of section.settings) {
      if (settings.has(definition.key))
        throw new Error(
          `Two settings sections declare '${definition.key}' (${settings.get(definition.key)!.section.name}, ${section.name}).`,
        );
      const files = definition.files ?? ['agent'];
      const path = definition.key.split('.');
      settings.set(definition.key, { section, definition, path, files });
      if (files.length === 0) continue;
      const top = topKeys.get(path[0]!) ?? {
        files: new Set<SettingsFile>(),
        children: new Set<string>(),
        owners: new Set<AnySettingsSection>(),
      };
      for (const file of files) top.files.add(file);
      top.owners.add(section);
      if (path.length > 1) top.children.add(path.slice(1).join('.'));
      topKeys.set(path[0]!, top);
    }
    for (const mapping of section.mappings ?? []) {
      const top = topKeys.get(mapping.key);
      if (top !== undefined) top.unknownKeys = mapping.unknownKeys;
    }
  }
  return { settings, topKeys, aliases };
}

const FILE_NAMES: Record<SettingsFile, string> = {
  home: '$RHO_HOME/config.yaml',
  agent: 'an agent config (--config)',
};

/**
 * Warns about keys no section knows and keys of the other file; checks the mappings of
 * settings. Returns the agent config's keys kept as written for a new session's `config.yaml`
 * (unknown ones too, so a file written for a later version loses nothing).
 */
export function checkFileKeys(
  index: SettingsIndex,
  files: { home?: ConfigSource | undefined; agent?: ConfigSource | undefined },
  built: readonly AnySettingsSection[],
  warnings: string[],
): Record<string, unknown> {
  const extras: Record<string, unknown> = {};
  for (const kind of ['home', 'agent'] as const) {
    const source = files[kind];
    if (source === undefined || !isMapping(source.value)) continue;
    const knownHere = [...index.topKeys].filter(([, top]) => top.files.has(kind)).map(([key]) => key);
    for (const [key, value] of Object.entries(source.value)) {
      const top = index.topKeys.get(key);
      const where = configLocation(source, [key]);
      if (top === undefined) {
        if (kind === 'agent') extras[key] = value;
        const { suggestion } = suggestKey(key, [...index.topKeys.keys()], index.aliases);
        const shown =
          suggestion !== undefined && index.topKeys.get(suggestion)?.files.has(kind) === true ? suggestion : undefined;
        warnings.push(
          `${where}: unknown key '${key}' is ignored${shown !== undefined ? ` (did you mean '${shown}'?)` : kind === 'home' ? ` (this version knows ${knownHere.join(', ')})` : ''}.`,
        );
        continue;
      }
      if (!top.files.has(kind)) {
        if (kind === 'agent') extras[key] = value;
        const other = [...top.files].map((file) => FILE_NAMES[file]).join(' or ');
        warnings.push(`${where}: '${key}' is read from ${other}, not from this file; ignored here.`);
        continue;
      }
      // A mapping of settings is checked by a resolution that builds its section.
      if (top.children.size === 0 || value === null || value === undefined) continue;
      if (![...top.owners].some((owner) => built.includes(owner))) continue;
      const children = [...top.children].filter((child) => !child.includes('.'));
      validateConfig(v.custom(isMapping, `a mapping with ${children.join(', ')}`), value, source, [key]);
      for (const child of Object.keys(value as Record<string, unknown>)) {
        if (top.children.has(child)) continue;
        if (top.unknownKeys === 'error')
          throw configProblem(source, [key, child], `must be one of ${children.join(', ')}`, { value: child });
        const { suggestion } = suggestKey(child, children);
        warnings.push(
          `${configLocation(source, [key, child])}: unknown key '${key}.${child}' is ignored (${suggestion === undefined ? `${key} knows ${children.join(', ')}` : `did you mean '${suggestion}'?`}).`,
        );
      }
    }
  }
  return extras;
}

/** The value at a key path of a document (undefined when any step is missing). */
export function valueAt(document: unknown, path: ConfigPath): unknown {
  let value = document;
  for (const segment of path) {
    if (!isMapping(value)) return undefined;
    value = value[segment as string];
  }
  return value;
}

export function setAt(document: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let parent = document;
  for (const segment of path.slice(0, -1)) {
    if (!isMapping(parent[segment])) parent[segment] = {};
    parent = parent[segment] as Record<string, unknown>;
  }
  parent[path[path.length - 1]!] = value;
}
