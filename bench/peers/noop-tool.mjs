// A tool package for the `rho` CLI in bench/peers: the `noop` tool every other contestant has, so
// the CLI runs the same workload (`--tool-package bench/peers/noop-tool.mjs`). A tool is a plain
// object under the core tool contract; defineTool from @rho/core would return the same, frozen.
export default Object.freeze({
  name: 'noop',
  description: 'Does nothing.',
  parameters: { type: 'object', properties: { n: { type: 'integer' } } },
  annotations: { readOnly: true },
  async handle({ arguments: { n } }) {
    return { content: `ok ${n ?? 0}`, success: true };
  },
});
