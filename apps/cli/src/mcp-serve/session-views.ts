import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTrace, State } from '@rho/core';
import type { ListedSession } from '@rho/monitor';
import { z } from 'zod';

/** The label every session started through `rho mcp serve` carries. */
export const MCP_LABEL = 'mcp';
/** The label naming the client: `mcp-client:<clientInfo.name>`. */
export const MCP_CLIENT_LABEL = 'mcp-client';

/** The labels of a session started for a client. */
export function mcpLabels(clientName: string): string[] {
  // RHO_TASK_LABELS is comma-separated: a comma in a client's name would make two labels.
  return [MCP_LABEL, `${MCP_CLIENT_LABEL}:${clientName.replaceAll(',', ' ').trim() || 'unknown'}`];
}

export const sessionShape = {
  id: z.string(),
  status: z.string().describe('Live status: running, waiting_approval, completed, cancelled, error, dead, ...'),
  recorded_status: z.string(),
  profile: z.string().nullable(),
  model: z.string().nullable(),
  started_at: z.string(),
  updated_at: z.string().nullable(),
  first_prompt: z.string().nullable(),
  cost_usd: z.number().nullable(),
  labels: z.record(z.string(), z.string()),
  started_by_mcp: z.boolean().describe('Whether the session was started through rho mcp serve (label mcp)'),
};
export const sessionSchema = z.object(sessionShape);
export type SessionView = z.infer<typeof sessionSchema>;

/** A listed session as the tools return it. */
export function sessionView(session: ListedSession): SessionView {
  const labels = session.labels ?? {};
  return {
    id: session.id,
    status: session.status,
    recorded_status: session.recordedStatus,
    profile: session.profile ?? null,
    model: session.model ?? null,
    started_at: session.startedAt,
    updated_at: session.updatedAt ?? null,
    first_prompt: session.firstPrompt ?? null,
    cost_usd: session.costUsd ?? null,
    labels,
    started_by_mcp: Object.hasOwn(labels, MCP_LABEL),
  };
}

export const toolCallsShape = z.array(
  z.object({ name: z.string(), calls: z.number(), failed: z.number(), refused: z.number() }),
);

export const outputShape = {
  session_id: z.string(),
  status: z.string(),
  answer: z.string().nullable().describe("The model's last answer; null when it gave none"),
  tool_calls: toolCallsShape.describe('Each tool called, how often, how many failed and how many were refused'),
  input_tokens: z.number(),
  output_tokens: z.number(),
  cost_usd: z.number().nullable(),
};
export type SessionOutput = z.infer<z.ZodObject<typeof outputShape>>;

/** A session's answer and the summary of its tool calls, from its trace. */
export function readSessionOutput(directory: string, id: string, status: string): SessionOutput {
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(directory, 'trace.jsonl'));
  } catch {
    bytes = Buffer.alloc(0);
  }
  const state = State.fromJsonl(bytes);
  const last = [...state.messages]
    .reverse()
    .find((message) => message.role === 'assistant' && typeof message.content === 'string' && message.content !== '');
  const tally = new Map<string, { name: string; calls: number; failed: number; refused: number }>();
  const entry = (name: string) => {
    let found = tally.get(name);
    if (found === undefined) tally.set(name, (found = { name, calls: 0, failed: 0, refused: 0 }));
    return found;
  };
  for (const record of readTrace(bytes).records) {
    const name = typeof record.tool_name === 'string' ? record.tool_name : undefined;
    if (name === undefined) continue;
    if (record.type === 'tool_start') entry(name).calls += 1;
    else if (record.type === 'tool_end' && record.success === false) entry(name).failed += 1;
    else if (record.type === 'tool_blocked') entry(name).refused += 1;
  }
  const cost = state.usage.cost_usd;
  return {
    session_id: id,
    status,
    answer: last === undefined ? null : String(last.content),
    tool_calls: [...tally.values()],
    input_tokens: state.usage.input_tokens,
    output_tokens: state.usage.output_tokens,
    cost_usd: cost === 0 && (state.usage.unpriced_calls ?? 0) > 0 ? null : cost,
  };
}
