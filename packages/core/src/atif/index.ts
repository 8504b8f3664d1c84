/**
 * `@rho/core/atif`: a session as an ATIF-v1.6 trajectory (Harbor's Agent Trajectory Interchange
 * Format, what `rho export` writes): `sessionToAtif` reads a session directory, `traceToAtif` a
 * trace already read, `validateAtifTrajectory` checks a document against the schema, and the
 * format's types. A public entry of its own: an export format, apart from the agent runtime.
 */
export { ATIF_SCHEMA_VERSION, validateAtifTrajectory } from './atif-schema.js';
export type {
  AtifAgent,
  AtifContentPart,
  AtifFinalMetrics,
  AtifImageSource,
  AtifMetrics,
  AtifObservation,
  AtifObservationResult,
  AtifStep,
  AtifStepSource,
  AtifSubagentTrajectoryRef,
  AtifToolCall,
  AtifTrajectory,
  AtifValidationIssue,
} from './atif-schema.js';
export { traceToAtif } from './trace-to-atif.js';
export type { TraceToAtifOptions } from './trace-to-atif.js';
export { sessionToAtif } from './session-to-atif.js';
