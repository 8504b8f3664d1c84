/**
 * `@rho/hooks/settings`: the hooks' settings section. Light: it validates the `hooks:` mappings
 * and starts nothing.
 */
import { defineSettingsSection, mapping } from '@rho/core/settings';
import type { HooksConfig } from './config.js';
import { HOOK_EVENTS, NOTIFICATION_EVENTS, parseHooksSources } from './config.js';

/** The hooks of a run, by event (`$RHO_HOME/config.yaml`'s first), and whether there is any. */
export interface HooksSettings {
  readonly hooks: HooksConfig;
  /** Whether any hook is configured. */
  readonly any: boolean;
  /** Whether a notification hook is configured (the run then waits for them before it exits). */
  readonly notifications: boolean;
}

/**
 * Hooks: `hooks:` of `$RHO_HOME/config.yaml` and of the agent config. Both run: for each event,
 * `$RHO_HOME/config.yaml`'s hooks first, then the agent config's (a `pre_tool` verdict is the
 * strictest of them all, whatever the order). An HTTP hook's `secret_env` value is a secret.
 */
export const hooksSettingsSection = defineSettingsSection({
  name: 'hooks',
  owner: '@rho/hooks',
  description:
    'Commands or HTTP POSTs run on session_end, waiting_approval, error, budget_reached, directive_received, and around tool calls (pre_tool can allow, deny or ask, never loosen the profile); both files’ hooks run, $RHO_HOME/config.yaml’s first.',
  aliases: { hook: 'hooks', notifications: 'hooks', notify: 'hooks' },
  settings: [
    {
      key: 'hooks',
      description: `Hooks by event (${HOOK_EVENTS.join(', ')}) → a list of {command | url, name, timeout, tools, secret_env}`,
      files: ['home', 'agent'],
      ...mapping('a mapping of events to lists of hooks (each a command or a url)'),
      merge: true,
      why: 'the hooks of both files run, $RHO_HOME/config.yaml’s first, then the agent config’s',
    },
  ],
  build(context): HooksSettings {
    const layers = context.layers('hooks');
    const home = layers.find((layer) => layer.kind === 'home');
    const agent = layers.find((layer) => layer.kind === 'agent' || layer.kind === 'saved');
    const hooks = parseHooksSources(
      [
        ...(home === undefined ? [] : [{ origin: home.origin, value: home.value }]),
        ...(agent === undefined ? [] : [{ origin: agent.origin, value: agent.value }]),
      ],
      context.env,
    );
    for (const event of HOOK_EVENTS)
      hooks[event].forEach((hook, index) => {
        if (hook.kind === 'http') {
          if (hook.secret !== undefined) context.secret(`hooks.${event}[${index}].secret_env`, hook.secret, 1);
          context.secretUrl(hook.url);
        }
      });
    return {
      hooks,
      any: HOOK_EVENTS.some((event) => hooks[event].length > 0),
      notifications: NOTIFICATION_EVENTS.some((event) => hooks[event].length > 0),
    };
  },
});
