export { createGgufModelClient } from './gguf-model-client.js';
export type { GgufModelClient, GgufModelClientOptions, GgufToolChoice } from './gguf-model-client.js';
