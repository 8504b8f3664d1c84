/**
 * Every setting of every settings section, set in each source that may set it: the value lands in
 * the run's typed settings with the documented precedence (defaults < standard variables <
 * `$RHO_HOME/config.yaml` < the agent config or a resumed session's saved settings < the
 * environment < flags, with each setting's declared exceptions), and `sources` names where it
 * came from. A setting without a sample fails here, so a new setting is covered when it is added.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SettingDefinition } from '@rho/core/settings';
import { readSessionSettings, resolveSettings } from '@rho/core/settings';
import { afterAll, describe, expect, it } from 'vitest';
import { allSections } from '../src/settings.js';
import type { AllSettings, Source } from './support/settings-samples.js';
import { precedence, sampleFiles, settingSamples } from './support/settings-samples.js';

const root = mkdtempSync(join(tmpdir(), 'rho-settings-precedence-'));
sampleFiles(root);
const samples = settingSamples(root);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const settings: { section: string; setting: SettingDefinition }[] = allSections.flatMap((section) =>
  section.settings.map((setting) => ({ section: section.name, setting })),
);

/** A document with `value` at the dotted `key`. */
function documentWith(key: string, value: unknown): Record<string, unknown> {
  const path = key.split('.');
  const document: Record<string, unknown> = {};
  let parent = document;
  for (const segment of path.slice(0, -1)) {
    parent[segment] = {};
    parent = parent[segment] as Record<string, unknown>;
  }
  parent[path.at(-1)!] = value;
  return document;
}

let runs = 0;

/** Resolves every section with the setting given in each of `present` (the n-th source gets sample n). */
async function resolveWith(setting: SettingDefinition, present: readonly Source[], resumed: boolean) {
  const sample = samples[setting.key]!;
  const dir = join(root, `run${(runs += 1)}`);
  const home = join(dir, 'home');
  mkdirSync(home, { recursive: true });
  const env: Record<string, string> = { ...sample.context?.env };
  const overrides: Record<string, unknown> = { ...sample.context?.overrides };
  let agentConfig: string | undefined;
  let saved: ReturnType<typeof readSessionSettings>;
  const text = (n: number) => String((sample.text ?? sample.file!)(n));
  present.forEach((source, index) => {
    const n = index + 1;
    if (source === 'home')
      writeFileSync(join(home, 'config.yaml'), JSON.stringify(documentWith(setting.key, sample.file!(n))));
    else if (source === 'agent') {
      agentConfig = join(dir, 'agent.yaml');
      writeFileSync(agentConfig, JSON.stringify(documentWith(setting.key, sample.file!(n))));
    } else if (source === 'saved') {
      const session = join(dir, 'session');
      mkdirSync(session);
      writeFileSync(join(session, 'config.yaml'), JSON.stringify(documentWith(setting.key, sample.file!(n))));
      saved = readSessionSettings(session);
    } else if (source === 'env') env[setting.env![0]!] = text(n);
    else if (source === 'fallback') env[setting.fallbackEnv![0]!] = text(n);
    else if (source === 'flag') overrides[setting.flag!] = sample.text === undefined ? sample.file!(n) : sample.text(n);
  });
  if (resumed && saved === undefined) {
    const session = join(dir, 'session');
    mkdirSync(session, { recursive: true });
    writeFileSync(join(session, 'config.yaml'), '{}\n');
    saved = readSessionSettings(session);
  }
  return resolveSettings({
    sections: allSections,
    home,
    env,
    cwd: root,
    ...(agentConfig === undefined ? {} : { agentConfig }),
    ...(saved === undefined ? {} : { resumed: saved }),
    overrides,
  });
}

/** What `sources` says for a source (a file's line, a variable, a flag). */
function describedAs(setting: SettingDefinition, source: Source): RegExp {
  switch (source) {
    case 'default':
      return /^default/;
    case 'home':
      return /config\.yaml:\d+/;
    case 'agent':
      return /agent\.yaml:\d+/;
    case 'saved':
      return /config\.yaml:\d+/;
    case 'env':
      return new RegExp(`^env ${setting.env![0]}`);
    case 'fallback':
      return new RegExp(`^env ${setting.fallbackEnv![0]}`);
    case 'flag':
      return new RegExp(`^--${setting.flag}`);
  }
}

describe('every settings section: each key from each source, with the documented precedence', () => {
  it('has a sample for every setting (a new setting needs one here)', () => {
    expect(settings.map(({ setting }) => setting.key).filter((key) => samples[key] === undefined)).toEqual([]);
  });

  for (const resumed of [false, true]) {
    for (const { section, setting } of settings) {
      const sample = samples[setting.key];
      if (sample === undefined) continue;
      const order = precedence(setting, resumed).filter(
        (source) => source !== 'default' && (resumed ? source !== 'agent' : source !== 'saved'),
      );
      if (order.length === 0) continue;
      it(`${section}: ${setting.key}${resumed ? ' (resumed)' : ''} from ${order.join(' < ')}`, async () => {
        // Every source at once, then one fewer from the top: the highest given wins each time.
        for (let top = order.length; top >= 1; top -= 1) {
          const present = order.slice(0, top);
          const winner = present.at(-1)!;
          const n = top;
          const resolved = await resolveWith(setting, present, resumed);
          const values = present.map((source, index) => sample.value(index + 1, source));
          const sameShape =
            values.every(Array.isArray) || values.every((value) => typeof value === 'object' && !Array.isArray(value));
          if (setting.merge === true && sameShape) {
            // A merged setting: every source's value, the highest on top (mappings by key, lists in order).
            const merged = values.every(Array.isArray)
              ? values.flat()
              : Object.assign({}, ...(values as Record<string, unknown>[]));
            expect(resolved.values[setting.key], `${setting.key} from ${present.join(', ')}`).toEqual(merged);
            expect(resolved.sources[setting.key]!.split(' + ')).toHaveLength(present.length);
            const landed = sample.landed(resolved.settings as unknown as AllSettings);
            // Lists land as they are; mappings of named entries (MCP servers) by name; the fleet's mapping as its URL.
            expect(landed, `${setting.key} in RunSettings`).toEqual(
              Array.isArray(merged)
                ? merged
                : setting.key === 'fleet'
                  ? (merged as { url?: string }).url
                  : Object.keys(merged as Record<string, unknown>),
            );
            continue;
          }
          // (A merged mapping given also as a URL by a variable or flag, as the fleet's: the URL wins.)
          if (setting.merge !== true) {
            expect(resolved.values[setting.key], `${setting.key} from ${present.join(', ')}`).toEqual(
              sample.value(n, winner),
            );
            expect(resolved.sources[setting.key], `${setting.key}'s source`).toMatch(describedAs(setting, winner));
          }
          const landed = sample.landed(resolved.settings as unknown as AllSettings);
          expect(landed, `${setting.key} in RunSettings`).toEqual(
            sample.typed === undefined ? sample.value(n, winner) : sample.typed(n, winner, present),
          );
        }
      });
    }
  }
});
