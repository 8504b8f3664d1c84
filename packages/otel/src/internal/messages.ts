import type { ChatMessage } from '@rho/core';

/** A message part of the GenAI conventions' `gen_ai.input.messages` / `gen_ai.output.messages`. */
type Part =
  | { type: 'text'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: unknown }
  | { type: 'tool_call_response'; id: string; response: string };

/** A message in the conventions' shape: a role and its parts. */
interface ConventionMessage {
  role: string;
  parts: Part[];
  finish_reason?: string;
}

/** Chat messages (the OpenAI shape rho keeps) in the GenAI conventions' message shape. */
export function conventionMessages(messages: readonly ChatMessage[]): ConventionMessage[] {
  return messages.map((message) => conventionMessage(message));
}

/** One chat message in the conventions' shape, with the call's finish reason for an output message. */
export function conventionMessage(message: ChatMessage, finishReason?: string | null): ConventionMessage {
  const parts: Part[] = [];
  if (message.role === 'tool') {
    parts.push({ type: 'tool_call_response', id: message.tool_call_id, response: message.content });
  } else {
    if (typeof message.content === 'string' && message.content !== '')
      parts.push({ type: 'text', content: message.content });
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) {
        parts.push({
          type: 'tool_call',
          id: call.id,
          name: call.function.name,
          arguments: parseArguments(call.function.arguments),
        });
      }
    }
  }
  return {
    role: message.role,
    parts,
    ...(finishReason === undefined || finishReason === null ? {} : { finish_reason: finishReason }),
  };
}

/** Tool arguments as an object when they are JSON (models send a string), else the string itself. */
function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A value as a span attribute: strings as they are, anything else as JSON. */
export function attributeText(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
