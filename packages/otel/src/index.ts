export { instrumentSession } from './instrument-session.js';
export { createSessionSpanObserver } from './session-span-observer.js';
export type { SessionSpanOptions } from './session-span-observer.js';
export { createOtlpTracing } from './otlp-tracing.js';
export type { OtlpTracing, OtlpTracingOptions } from './otlp-tracing.js';
export { otlpEnvironment, otlpTracesUrl, parseOtlpHeaders } from './otlp-settings.js';
export type { OtlpEnvironment } from './otlp-settings.js';
export { GEN_AI, GEN_AI_OPERATION, RHO } from './gen-ai-attributes.js';
