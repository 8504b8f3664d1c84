export { createModelClient, shouldStream } from './create-model-client.js';
export type { ModelClientOptions, StreamingMode } from './create-model-client.js';
export { ModelApiError, ModelResponseError, RhoError } from './errors.js';
export type { ModelApiErrorOptions, ModelResponseErrorOptions, ModelResponseKind, RhoErrorOptions } from './errors.js';
export { costOf, DEFAULT_PRICE_TABLE, priceFor } from './pricing.js';
export type { ModelPrice, PriceTable, TokenCounts } from './pricing.js';
export type {
  ChatMessage,
  ChatToolCall,
  ModelClient,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
  ModelToolCall,
  RetryNotice,
  ToolSpec,
  Usage,
} from './types.js';
export { contextWindowFor, DEFAULT_CONTEXT_WINDOWS } from './context-windows.js';
