// The `noop` tool of the benchmarks: the rho library's contestants (bench/peers/worker.mjs,
// bench/loop.mjs) import it, and the `rho` CLI loads it as a tool package (`--tool-package
// bench/peers/noop-tool.mjs`), so every contestant runs the same tool. A tool is a plain
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
