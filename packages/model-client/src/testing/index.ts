export { startLoopbackServer } from './loopback-server.js';
export type {
  LoopbackBodyStep,
  LoopbackChunksStep,
  LoopbackCloseStep,
  LoopbackDropStep,
  LoopbackHangStep,
  LoopbackHttpErrorStep,
  LoopbackResponseStep,
  LoopbackServer,
  LoopbackServerOptions,
  LoopbackStep,
  LoopbackToolCall,
  LoopbackUsage,
  RecordedRequest,
} from './loopback-server.js';
