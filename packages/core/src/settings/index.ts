/**
 * `@rho/core/settings`: run settings, built once. Each feature package declares its section (its
 * YAML keys, environment variables, flags, valibot schemas, defaults, and how its typed value is
 * built); {@link resolveSettings} resolves a list of sections with one precedence (defaults <
 * `$RHO_HOME/config.yaml` < the agent config < the environment < flags, with the exceptions a
 * setting declares) and says where each value came from. This module is also the one reader and
 * writer of a session's saved settings (`config.yaml` and `secrets.json`).
 */
export { defineSettingsSection } from './section.js';
export type {
  AnySettingsSection,
  SectionContext,
  SettingDefinition,
  SettingLayer,
  SettingLayerKind,
  SettingsFile,
  SettingsMapping,
  SettingsOf,
  SettingsSection,
} from './section.js';
export { resolveSettings, valueAt } from './resolve.js';
export type { ResolvedSettings, ResolveSettingsOptions } from './resolve.js';
export {
  aboveZero,
  checkedText,
  choice,
  countOfAtLeastOne,
  duration,
  flagOrSwitch,
  isMapping,
  listOfText,
  mapping,
  mappingOfText,
  nameOrMapping,
  parseDuration,
  retries,
  seconds,
  text,
  wholeAmount,
} from './kinds.js';
export type { SettingKind } from './kinds.js';
export { suggestKey } from './suggest.js';
export type { KeySuggestion } from './suggest.js';
export { collectKnownSecrets, isSecretName, looksLikeCredential, SecretCollector } from './known-secrets.js';
export {
  readSessionSettings,
  redactSettings,
  sessionSettingsDocument,
  SESSION_SECRETS_FILE,
  SESSION_SETTINGS_FILE,
  writeSessionSecrets,
  writeSessionSettings,
} from './saved-settings.js';
export type { SavedSecret, SavedSettings } from './saved-settings.js';
export {
  budgetsSettingsSection,
  compactionSettingsSection,
  modelSettingsSection,
  REASONING_EFFORTS,
} from './core-sections.js';
export type { ModelSettings } from './core-sections.js';
export {
  approvalSettingsSection,
  promptSettingsSection,
  toolPackagesSettingsSection,
  workingDirSettingsSection,
} from './run-sections.js';
export type {
  ApprovalSettings,
  PromptSettings,
  ToolPackageReference,
  ToolPackageSettings,
  WorkingDirSettings,
} from './run-sections.js';
export { settingsReference } from './reference.js';
