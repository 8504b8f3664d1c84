import type { AnySettingsSection, SettingDefinition } from './section.js';

const FILES: Record<string, string> = { home: '`$RHO_HOME/config.yaml`', agent: 'agent config' };

/**
 * The reference of a list of sections in Markdown: for each section its settings (YAML key, the
 * files that take it, environment variables, flag, default), then every precedence exception
 * with its reason. docs/settings.md holds it between markers, and a test keeps the two equal.
 */
export function settingsReference(sections: readonly AnySettingsSection[]): string {
  const lines: string[] = [];
  for (const section of sections) {
    lines.push(`### ${section.name} (${section.owner})`, '', section.description, '');
    lines.push('| Key | Files | Environment | Flag | Default | Notes |', '| --- | --- | --- | --- | --- | --- |');
    for (const setting of section.settings) lines.push(row(setting));
    lines.push('');
  }
  lines.push('### Exceptions to the precedence', '');
  lines.push('| Key | Rule | Why |', '| --- | --- | --- |');
  for (const section of sections)
    for (const setting of section.settings) {
      const rule = exception(setting);
      if (rule !== undefined) lines.push(`| \`${setting.key}\` | ${rule} | ${escape(setting.why ?? '')} |`);
    }
  lines.push('');
  return lines.join('\n');
}

function row(setting: SettingDefinition): string {
  const files = (setting.files ?? ['agent']).map((file) => FILES[file]).join(', ') || '-';
  const env = [
    ...(setting.env ?? []).map((name) => `\`${name}\``),
    ...(setting.fallbackEnv ?? []).map((name) => `\`${name}\` (below the files)`),
  ].join(', ');
  const flag = setting.flag === undefined ? '-' : `\`--${setting.flag}\``;
  const shown = setting.defaultText ?? (setting.default === undefined ? '-' : `\`${JSON.stringify(setting.default)}\``);
  const notes = [
    setting.secret === true ? 'secret' : '',
    setting.merge === true ? 'merged across sources' : '',
    exception(setting) === undefined ? '' : 'a precedence exception (below)',
    setting.save === 'never' || (setting.save === undefined && !(setting.files ?? ['agent']).includes('agent'))
      ? ''
      : `saved with the session (${setting.save ?? 'explicit'})`,
  ]
    .filter((note) => note !== '')
    .join('; ');
  const described =
    notes === '' ? setting.description : `${setting.description}. ${notes[0]!.toUpperCase()}${notes.slice(1)}.`;
  return `| \`${setting.key}\` | ${files} | ${env || '-'} | ${flag} | ${shown} | ${escape(described)} |`;
}

function exception(setting: SettingDefinition): string | undefined {
  const rules = [
    setting.configBeatsEnv === true ? 'the agent config beats the environment' : '',
    setting.pinned === true ? 'a resumed session keeps its saved value over the environment' : '',
    (setting.fallbackEnv ?? []).length > 0 ? `${setting.fallbackEnv!.join(', ')} count below the files` : '',
    setting.merge === true ? 'the sources merge' : '',
  ].filter((rule) => rule !== '');
  return rules.length === 0 ? undefined : rules.join('; ');
}

function escape(text: string): string {
  return text.replace(/\|/g, '\\|');
}
