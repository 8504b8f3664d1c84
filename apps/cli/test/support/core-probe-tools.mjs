// A tool package of a third party, for global-install.test.ts: copied into a folder outside the
// workspace with nothing installed there, it imports @rho/core from the CLI that loads it.
import { ConfigError, RhoError, Session, State, defineTool } from '@rho/core';

/** Says which @rho/core it got, and whether what the CLI made is an instance of its classes. */
export const probe = defineTool({
  name: 'core_probe',
  description: 'Which @rho/core this is.',
  parameters: { type: 'object', properties: {} },
  annotations: { readOnly: true },
  async handle(_call, context) {
    const child = context.children.spawn();
    const error = new ConfigError({ message: 'x' });
    const found = {
      core: import.meta.resolve('@rho/core'),
      session: child instanceof Session,
      state: child.state instanceof State,
      error: error instanceof RhoError && RhoError.isInstance(error),
    };
    return { success: true, content: JSON.stringify(found) };
  },
});

/** Fails with a rho error. */
export const refuse = defineTool({
  name: 'core_refuse',
  description: 'Refuses.',
  parameters: { type: 'object', properties: {} },
  annotations: { readOnly: true },
  async handle() {
    throw new ConfigError({ message: 'the probe refuses' });
  },
});
