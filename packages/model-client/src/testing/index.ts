export { startLoopbackServer } from './loopback-server.js';
export type {
  LoopbackBodyStep,
  LoopbackChunksStep,
  LoopbackCloseStep,
  LoopbackDiscoveryAnswer,
  LoopbackDropStep,
  LoopbackHangStep,
  LoopbackHttpErrorStep,
  LoopbackModel,
  LoopbackResponseStep,
  LoopbackServer,
  LoopbackServerOptions,
  LoopbackStep,
  LoopbackToolCall,
  LoopbackUsage,
  RecordedRequest,
} from './loopback-server.js';
