import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import * as v from 'valibot';
import { ConfigError } from '../errors.js';
import { choice, duration, flagOrSwitch, isMapping, listOfText, text } from './kinds.js';
import { DEFAULT_APPROVAL_TIMEOUT_MS } from '../session-options.js';
import { defineSettingsSection } from './section.js';

/** The system prompt and its template variables, as given (the CLI renders prompt files). */
export interface PromptSettings {
  /** `--system-prompt` (an absolute path) or the agent config's `system_prompt` (literal text, or a `.md` path). */
  readonly systemPrompt?: string;
  /** The agent config's `vars`. */
  readonly vars: Readonly<Record<string, string>>;
  /** `--var key=value` items, in order (later ones win). */
  readonly flagVars: readonly string[];
  /** `--vars-file`, an absolute path. */
  readonly varsFile?: string;
}

/** The system prompt. */
export const promptSettingsSection = defineSettingsSection({
  name: 'prompt',
  owner: '@rho/core',
  description:
    'The system prompt (literal text or a Markdown prompt file) and its template variables; without one, $RHO_HOME/default.md, else the built-in prompt.',
  aliases: { prompt: 'system_prompt', vars_file: 'vars' },
  settings: [
    {
      key: 'system_prompt',
      description: 'The system prompt: literal text, or a path to a Markdown prompt file (ending in .md)',
      ...text(),
      flag: 'system-prompt',
      // A flag names a file, made absolute so a resume finds it.
      text: (value) => resolve(value),
    },
    {
      key: 'vars',
      description: 'Template variables of the prompt file',
      schema: v.pipe(
        v.custom<Record<string, unknown>>(isMapping, 'a mapping of names to values'),
        v.transform((value) =>
          Object.fromEntries(Object.entries(value).map(([name, item]) => [name, item === null ? '' : String(item)])),
        ),
      ),
    },
    {
      key: 'var',
      description: 'A template variable key=value (repeatable)',
      files: [],
      schema: v.array(
        v.pipe(
          v.string(),
          v.check(
            (item) => item.indexOf('=') > 0 && item.slice(0, item.indexOf('=')).trim() !== '',
            'takes key=value, for example --var who=ZELDA',
          ),
        ),
      ),
      text: (value) => [value],
      flag: 'var',
    },
    {
      key: 'vars_file',
      description: 'A YAML file of template variables',
      files: [],
      ...text(),
      flag: 'vars-file',
      text: (value) => resolve(value),
    },
  ],
  build(context): PromptSettings {
    const systemPrompt = context.value<string>('system_prompt');
    const varsFile = context.value<string>('vars_file');
    return {
      ...(systemPrompt === undefined ? {} : { systemPrompt }),
      vars: context.value<Record<string, string>>('vars') ?? {},
      flagVars: context.value<string[]>('var') ?? [],
      ...(varsFile === undefined ? {} : { varsFile }),
    };
  },
});

/** The working directory of the tools. */
export interface WorkingDirSettings {
  /** Absolute, an existing directory. */
  readonly workingDir: string;
}

/** The working directory. */
export const workingDirSettingsSection = defineSettingsSection({
  name: 'workingDir',
  owner: '@rho/core',
  description: 'The working directory of the file and shell tools.',
  settings: [
    {
      key: 'working_dir',
      description: 'Working directory of the tools',
      ...text('a directory'),
      flag: 'working-dir',
      emptyFlag: 'unset',
      defaultText: 'the current directory',
      pinned: true,
      why: 'a resumed session runs where it ran (it has no variable, so only a flag changes it)',
      save: 'resolved',
    },
  ],
  build(context): WorkingDirSettings {
    const workingDir = resolve(context.cwd, context.value<string>('working_dir') ?? '.');
    if (!isDirectory(workingDir)) {
      const kind = context.winner('working_dir')?.kind;
      if (kind === 'agent' || kind === 'saved')
        throw context.problem('working_dir', `names a directory that does not exist: ${workingDir}`);
      throw new ConfigError({
        message: `Working directory not found: ${workingDir}. Pass an existing directory to --working-dir.`,
        field: 'working_dir',
      });
    }
    context.derived('working_dir', workingDir, 'default (the current directory)');
    return { workingDir };
  },
  save: (_context, value) => ({ working_dir: value.workingDir }),
});

/** How tool calls that need approval are answered. */
export interface ApprovalSettings {
  /** Approve every call without asking (`-y`). */
  readonly autoApprove: boolean;
  /** Nobody at this terminal can answer: `wait` for an answer from elsewhere, or `withhold` (refuse, do not offer). */
  readonly unattended: 'wait' | 'withhold';
  /** How long a call waits for an answer, in milliseconds. */
  readonly timeoutMs: number;
  /** What a timeout answers (a dangerous call is always denied). */
  readonly onTimeout: 'deny' | 'approve';
}

/** Approving tool calls. */
export const approvalSettingsSection = defineSettingsSection({
  name: 'approvals',
  owner: '@rho/core',
  description:
    'How tool calls that need approval are answered: -y approves all; with nobody at the terminal a call waits for rho approve / rho deny (or the dashboard, a fleet node), up to its timeout.',
  aliases: { approve: 'auto_approve' },
  settings: [
    {
      key: 'auto_approve',
      description: 'Approve every tool call without asking (-y)',
      ...flagOrSwitch(),
      flag: 'auto-approve',
      default: false,
      save: 'resolved',
    },
    {
      key: 'when_unattended',
      description:
        'With nobody at the terminal to answer: wait (the call waits for rho approve / rho deny) or withhold (such tools are not offered)',
      ...choice(['wait', 'withhold'] as const),
      env: ['RHO_WHEN_UNATTENDED'],
      flag: 'when-unattended',
      default: 'wait',
    },
    {
      key: 'approval_timeout',
      description: 'How long a tool call waits for an answer (30s, 10m, 2h, 1d)',
      ...duration('10m'),
      env: ['RHO_APPROVAL_TIMEOUT'],
      flag: 'approval-timeout',
      default: DEFAULT_APPROVAL_TIMEOUT_MS,
    },
    {
      key: 'on_timeout',
      description:
        'What a timeout answers: deny, or approve (a call that matched a dangerous pattern is denied all the same)',
      ...choice(['deny', 'approve'] as const),
      env: ['RHO_ON_TIMEOUT'],
      flag: 'on-timeout',
      default: 'deny',
    },
  ],
  build: (context): ApprovalSettings => ({
    autoApprove: context.value<boolean>('auto_approve') === true,
    unattended: context.value<'wait' | 'withhold'>('when_unattended') ?? 'wait',
    timeoutMs: context.value<number>('approval_timeout') ?? DEFAULT_APPROVAL_TIMEOUT_MS,
    onTimeout: context.value<'deny' | 'approve'>('on_timeout') ?? 'deny',
  }),
});

/** A tool package to load: as written, where it is looked up, and where it was named. */
export interface ToolPackageReference {
  spec: string;
  /** Directories a name is looked up from, in order; a relative path resolves against the first. */
  baseDirs: string[];
  /** Where it was named, for messages (the agent config, `--tool-package`). */
  origin: string;
}

/** The tool packages of a run. */
export interface ToolPackageSettings {
  /** Each package once (the agent config's, then the flags'). */
  readonly packages: readonly ToolPackageReference[];
}

/** Tool packages: named in the agent config and by flags, which add to it. */
export const toolPackagesSettingsSection = defineSettingsSection({
  name: 'toolPackages',
  owner: '@rho/core',
  description: 'Tool packages to load: package names or paths (--tool-package adds to the agent config’s list).',
  aliases: { tools: 'tool_packages', plugins: 'tool_packages', packages: 'tool_packages', extensions: 'tool_packages' },
  settings: [
    {
      key: 'tool_packages',
      description: 'Tool packages to load: package names or paths',
      ...listOfText('a list of package names or paths'),
      flag: 'tool-package',
      merge: true,
      why: '--tool-package adds to the agent config’s list instead of replacing it',
    },
  ],
  build(context): ToolPackageSettings {
    const { workingDir } = context.section<WorkingDirSettings>('workingDir');
    const cwd = context.cwd;
    const seen = new Set<string>();
    const packages: ToolPackageReference[] = [];
    for (const layer of context.layers('tool_packages')) {
      const fromFlag = layer.kind === 'flag';
      // A resumed session's config lives in its session directory: names also resolve from the current directory.
      const baseDirs = fromFlag ? [cwd, workingDir] : [...new Set([context.agentDirectory ?? cwd, workingDir, cwd])];
      for (const spec of layer.value as string[]) {
        const reference = {
          spec,
          baseDirs,
          origin: fromFlag ? '--tool-package' : (context.agentFile ?? 'agent config'),
        };
        // A package named twice (the saved path, and the same --tool-package given again, relative) is loaded once.
        const key = absoluteSpec(reference);
        if (seen.has(key)) continue;
        seen.add(key);
        packages.push(reference);
      }
    }
    return { packages };
  },
  // Saved so a resume loads the same packages (paths made absolute).
  save: (_context, value) =>
    value.packages.length === 0 ? {} : { tool_packages: [...new Set(value.packages.map(absoluteSpec))] },
});

/** A path reference made absolute (names stay names). */
function absoluteSpec(reference: ToolPackageReference): string {
  const { spec } = reference;
  if (spec.startsWith('~') || isAbsolute(spec) || !spec.startsWith('.')) return spec;
  return resolve(reference.baseDirs[0] ?? process.cwd(), spec);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
