import { runSettingsSections } from '@rho/agent/settings';
import type { AnySettingsSection, SettingsOf } from '@rho/core/settings';
import { fleetSettingsSection } from '@rho/fleet/settings';
import { hooksSettingsSection } from '@rho/hooks/settings';
import { otelSettingsSection } from '@rho/otel/settings';
import { queueSettingsSection, workerSettingsSection } from '@rho/queue/settings';
import { mcpServeSettingsSection } from './mcp-serve/serve-settings.js';
import { workspaceSettingsSection } from './workspace-settings.js';

/**
 * Every settings section of a run, in the order they are built: the agent's (model, prompt,
 * working directory, profile, backend, budgets, compaction, approvals, tool packages, databases,
 * MCP servers), then the run's workspace (after the profile it depends on), the fleet,
 * OpenTelemetry export, the queued task and the hooks.
 */
export const runSections = [
  ...runSettingsSections,
  workspaceSettingsSection,
  fleetSettingsSection,
  otelSettingsSection,
  queueSettingsSection,
  hooksSettingsSection,
] as const;

/** Every section of the product: a run's, `rho worker`'s and `rho mcp serve`'s (the one list of keys "did you mean" reads). */
export const allSections = [...runSections, workerSettingsSection, mcpServeSettingsSection] as const;

/** The settings of a run: each section's value under its name. */
export type RunSettings = SettingsOf<typeof runSections>;

/**
 * The overrides object of a command's parsed arguments: each section's flag (`max-turns`) with
 * its value as typed (yargs names it `maxTurns`). The one place where flags become settings.
 * A boolean flag whose setting defaults to false (`-y`) is given only when true.
 */
export function settingsOverrides(
  argv: Readonly<Record<string, unknown>>,
  sections: readonly AnySettingsSection[] = allSections,
): Record<string, unknown> {
  const overrides: Record<string, unknown> = {};
  for (const section of sections)
    for (const setting of section.settings) {
      if (setting.flag === undefined) continue;
      const camel = setting.flag.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
      const value = argv[camel] ?? argv[setting.flag];
      if (value === undefined || (value === false && setting.default === false)) continue;
      overrides[setting.flag] = value;
    }
  return overrides;
}

/** The reference of every section, as docs/settings.md holds it between its markers (`pnpm settings:docs` writes it). */
export async function settingsReferenceText(): Promise<string> {
  const { settingsReference } = await import('@rho/core/settings');
  return settingsReference(allSections);
}
