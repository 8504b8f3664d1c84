export { createScriptedModelClient } from './scripted-model-client.js';
export type { ScriptedModelClient, ScriptedStep, ScriptedStepSource } from './scripted-model-client.js';
export { startLoopbackServer } from '@rho/model-client/testing';
export type {
  LoopbackModel,
  LoopbackServer,
  LoopbackServerOptions,
  LoopbackStep,
  RecordedRequest,
} from '@rho/model-client/testing';
export { pythonTracesDir } from './fixtures.js';
export { processGroupMembers } from '../local-backend.js';
