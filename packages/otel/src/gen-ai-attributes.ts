/**
 * Attribute names and values of the OpenTelemetry GenAI semantic conventions (gen-ai spans and
 * agent spans, still "development" status). The conventions' own advice is to copy incubating
 * names rather than import them from `@opentelemetry/semantic-conventions/incubating`, whose
 * exports may change in any minor release; these match its version 1.45.
 */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  agentId: 'gen_ai.agent.id',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  usageCacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  usageReasoningOutputTokens: 'gen_ai.usage.reasoning.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  systemInstructions: 'gen_ai.system_instructions',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
} as const;

/** Values of `gen_ai.operation.name` that rho emits. */
export const GEN_AI_OPERATION = {
  invokeAgent: 'invoke_agent',
  chat: 'chat',
  executeTool: 'execute_tool',
} as const;

/** rho's own attributes, under the `rho.` namespace. */
export const RHO = {
  runStatus: 'rho.run.status',
  runLimit: 'rho.run.limit',
  costUsd: 'rho.cost_usd',
  purpose: 'rho.purpose',
  parentSessionId: 'rho.parent_session.id',
  toolBlockedReason: 'rho.tool.blocked_reason',
  contextSize: 'rho.context_size',
  refusal: 'rho.refusal',
} as const;
