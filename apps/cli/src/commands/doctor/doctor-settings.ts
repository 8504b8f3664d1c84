import type { AnySettingsSection, ResolvedSettings } from '@rho/core/settings';
import { resolveSettings } from '@rho/core/settings';
import { allSections, settingsOverrides } from '../../settings.js';
import { result, type CheckResult } from './report.js';

/** What the checks of `rho doctor` share: the environment, `$RHO_HOME`, the flags, the bounds. */
export interface DoctorContext {
  readonly env: NodeJS.ProcessEnv;
  readonly home: string;
  /** Longest wait of one check, in milliseconds. */
  readonly timeoutMs: number;
  /** `--online`: ask the model endpoint. */
  readonly online: boolean;
  /** The variables `.env` of the current directory set (a run reads them too). */
  readonly fromDotenv: ReadonlySet<string>;
  /**
   * Resolves `sections` as a run would (flags, environment, the agent config, `$RHO_HOME/config.yaml`),
   * each check only the sections it needs, so that a broken databases.yaml fails the database check alone.
   */
  settings<const Sections extends readonly AnySettingsSection[]>(
    sections: Sections,
  ): Promise<ResolvedSettings<Sections>>;
  /** Every warning the settings gave so far (unknown keys, notices such as rho-agent's databases.yaml), once each. */
  readonly warnings: ReadonlySet<string>;
}

/** Options of {@link doctorContext}. */
export interface DoctorContextOptions {
  env: NodeJS.ProcessEnv;
  home: string;
  timeoutMs: number;
  online: boolean;
  fromDotenv: ReadonlySet<string>;
  /** The parsed arguments: a run's flags among them (`--profile`, `--backend`, `--db-config`, ...) count as they would for a run. */
  argv: Readonly<Record<string, unknown>>;
  /** `--config`: the agent config. */
  agentConfig?: string;
}

/** The shared context of the checks. */
export function doctorContext(options: DoctorContextOptions): DoctorContext {
  const overrides = settingsOverrides(options.argv);
  const warnings = new Set<string>();
  return {
    warnings,
    env: options.env,
    home: options.home,
    timeoutMs: options.timeoutMs,
    online: options.online,
    fromDotenv: options.fromDotenv,
    async settings(sections) {
      const resolved = await resolveSettings({
        sections,
        knownSections: allSections,
        home: options.home,
        env: options.env,
        overrides,
        ...(options.agentConfig === undefined ? {} : { agentConfig: options.agentConfig }),
      });
      for (const warning of resolved.warnings) warnings.add(warning);
      return resolved;
    },
  };
}

/**
 * The `config` check: the files a run reads (`$RHO_HOME/config.yaml`, `--config`) parse, and
 * their keys are known (unknown ones are warnings with "did you mean").
 */
export async function configCheck(context: DoctorContext): Promise<CheckResult> {
  const resolved = await context.settings([]);
  const { warnings } = resolved;
  const files = [resolved.files.home?.file, resolved.files.agent?.file].filter((file) => file !== undefined);
  const read =
    files.length === 0 ? 'no configuration file (defaults and the environment)' : `${files.join(' and ')} read`;
  if (warnings.length > 0)
    return result(
      'config',
      'warn',
      `${read}: ${warnings.join('; ')}`,
      'correct or remove the keys named (rho config show --sources shows what a run uses)',
    );
  return result('config', 'ok', read);
}
