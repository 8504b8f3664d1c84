export { createModelClient, preloadOpenAI } from './create-model-client.js';
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
export { contextWindowFor, DEFAULT_CONTEXT_WINDOW, resolveContextWindow } from './context-windows.js';
export type { ContextWindowInfo, ContextWindowSource, ResolveContextWindowOptions } from './context-windows.js';
export { clearContextWindowCache, discoverContextWindow } from './discover-context-window.js';
export { MAX_DISCOVERY_BYTES, readJsonResponse } from './read-json.js';
export type {
  ContextWindowEndpoint,
  DiscoverContextWindowOptions,
  DiscoveredContextWindow,
} from './discover-context-window.js';
