export { createGgufModelClient } from './gguf-model-client.js';
export type { GgufModelClient, GgufModelClientOptions, GgufToolChoice } from './gguf-model-client.js';
export { answerSchemaOf, grammarSchemaOf } from './tool-grammar.js';
export type { GrammarSchema } from './tool-grammar.js';
