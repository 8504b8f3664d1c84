import { existsSync } from 'node:fs';
import { homedir, platform } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type { PromptSettings } from '@rho/core/settings';
import type { PermissionProfile } from '@rho/permissions';
import { defaultSystemPrompt } from './default-prompt.js';
import { loadPromptFile, loadVarsFile, parseVars, preparePrompt } from './prompt-files.js';

/** The system prompt of a run, its prompt file's initial prompt, and the variables to save with a new session. */
export interface ResolvedSystemPrompt {
  systemPrompt: string;
  initialPrompt?: string;
  /** A prompt file's variables (the agent config's, `--vars-file`'s, `--var`'s), saved so a resume renders it again. */
  vars?: Record<string, string>;
}

/**
 * The system prompt, by precedence: `--system-prompt` file, the config's `system_prompt` (a
 * `.md` path is a prompt file, anything else literal text), `$RHO_HOME/default.md`, the built-in.
 */
export function resolveSystemPrompt(
  prompt: PromptSettings,
  context: { home: string; workingDir: string; profile: PermissionProfile },
): ResolvedSystemPrompt {
  const cliVars = {
    ...(prompt.varsFile === undefined ? {} : loadVarsFile(prompt.varsFile)),
    ...parseVars(prompt.flagVars),
  };
  const builtinVars = {
    platform: platformName(),
    home_dir: homedir(),
    working_dir: context.workingDir,
    profile_name: context.profile.name,
    shell_mode: context.profile.shell,
    file_write_mode: context.profile.fileWrite,
    database_mode: context.profile.database,
  };
  const source = prompt.systemPrompt;
  if (source !== undefined && source.trim() !== '') {
    if (!source.trim().endsWith('.md')) return { systemPrompt: source };
    const path = isAbsolute(source) ? source : resolve(source);
    const vars = { ...prompt.vars, ...cliVars };
    return { ...preparePrompt(loadPromptFile(path), { ...builtinVars, ...vars }), vars };
  }
  const userDefault = join(context.home, 'default.md');
  if (existsSync(userDefault)) return preparePrompt(loadPromptFile(userDefault), { ...builtinVars, ...cliVars });
  return {
    systemPrompt: defaultSystemPrompt({
      platform: builtinVars.platform,
      homeDir: builtinVars.home_dir,
      workingDir: context.workingDir,
      profile: context.profile,
    }),
  };
}

function platformName(): string {
  const names: Record<string, string> = { linux: 'Linux', darwin: 'macOS', win32: 'Windows' };
  return names[platform()] ?? platform();
}
