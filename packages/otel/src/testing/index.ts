export { startOtlpReceiver } from './otlp-receiver.js';
export type { OtlpReceiver, OtlpReceiverOptions, ReceivedSpan } from './otlp-receiver.js';
