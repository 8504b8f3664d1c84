import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { RhoError } from '@rho/core';
import type { MonitoredSession } from '@rho/monitor';
import { LISTED_STATUSES } from '@rho/monitor';
import { z } from 'zod';
import type { ServeContext } from './serve-context.js';
import { cancelServedRun } from './serve-context.js';
import { lastAnswer, type RecordedAnswer } from '../commands/monitor/approval-actions.js';
import { outputShape, readSessionOutput, sessionSchema, sessionShape, sessionView } from './session-views.js';
import { refused, structured } from './tool-results.js';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const pendingSchema = z
  .array(
    z.object({
      tool_call_id: z.string().describe('What answer_approval names'),
      tool_name: z.string(),
      arguments: z.unknown(),
      reason: z.string().nullable().describe('Why the profile asks'),
    }),
  )
  .describe('The tool calls waiting for approval (answer_approval answers them)');
const sessionId = z.string().min(1).describe('The session id (rho ps lists them; run_task returns it)');

/** The session of an id, or a refusal saying so. */
async function find(context: ServeContext, id: string): Promise<MonitoredSession | CallToolResult> {
  try {
    const session = await context.source.resolve(id);
    if (session.id !== id) return refused(`No session ${id} (did you mean ${session.id}? give the whole id).`);
    return session as MonitoredSession;
  } catch (error) {
    return refused(RhoError.isInstance(error) ? error.message : `No session ${id}.`);
  }
}

/** The answer that stands for a call answered before this one, which was not recorded. */
function alreadyAnswered(sessionId: string, standing: RecordedAnswer): CallToolResult {
  return structured({
    session_id: sessionId,
    tool_call_id: standing.toolCallId,
    tool_name: standing.toolName ?? '',
    decision: standing.decision === 'deny' ? 'deny' : 'approve',
    outcome: 'already_answered',
    by: standing.by ?? null,
  });
}

const isResult = (value: unknown): value is CallToolResult =>
  typeof value === 'object' && value !== null && 'content' in value;

/** session_status, session_output, list_sessions: read-only views of the sessions directory. */
export function registerSessionViews(server: McpServer, context: ServeContext): void {
  server.registerTool(
    'session_status',
    {
      title: 'Status of a session',
      description:
        'The live status of a session (running, waiting_approval, completed, cancelled, ...), its labels, and the tool calls that wait for answer_approval.',
      inputSchema: { session_id: sessionId },
      outputSchema: { ...sessionShape, pending_approvals: pendingSchema },
      annotations: READ_ONLY,
    },
    async (args) => {
      const session = await find(context, args.session_id);
      if (isResult(session)) return session;
      const pending = (await context.source.pendingApprovals?.(session.id)) ?? [];
      return structured({
        ...sessionView(session),
        pending_approvals: pending.map((call) => ({
          tool_call_id: call.toolCallId,
          tool_name: call.toolName,
          arguments: call.arguments,
          reason: call.reason ?? null,
        })),
      });
    },
  );
  server.registerTool(
    'session_output',
    {
      title: "A session's answer and tool calls",
      description:
        "A session's last answer, a summary of its tool calls (how often each tool ran, failed, was refused) and its usage.",
      inputSchema: { session_id: sessionId },
      outputSchema: outputShape,
      annotations: READ_ONLY,
    },
    async (args) => {
      const session = await find(context, args.session_id);
      if (isResult(session)) return session;
      return structured(readSessionOutput(session.directory, session.id, session.status));
    },
  );
  server.registerTool(
    'list_sessions',
    {
      title: 'List sessions',
      description:
        'The sessions of this machine, newest first (all of them, not only those started here; started_by_mcp marks those that were).',
      inputSchema: {
        status: z
          .array(z.enum(LISTED_STATUSES as [string, ...string[]]))
          .optional()
          .describe('Only these statuses'),
        label: z.string().optional().describe('Only sessions with this label: key or key=value (mcp-client:NAME)'),
        limit: z.number().int().min(1).max(1000).optional().describe('At most this many (default 50)'),
      },
      outputSchema: { sessions: z.array(sessionSchema), total: z.number() },
      annotations: READ_ONLY,
    },
    async (args) => {
      const { sessions, total } = await context.source.list({
        ...(args.status === undefined ? {} : { status: args.status }),
        ...(args.label === undefined ? {} : { label: args.label }),
        limit: args.limit ?? 50,
      });
      return structured({ sessions: sessions.map(sessionView), total });
    },
  );
}

/** cancel_session, send_directive, answer_approval: what `rho cancel`, `rho directive`, `rho approve`/`deny` do. */
export function registerSessionControls(server: McpServer, context: ServeContext, client: () => string): void {
  server.registerTool(
    'cancel_session',
    {
      title: 'Cancel a session',
      description: 'Cancels a running session (as rho cancel does): it stops before its next step, status cancelled.',
      inputSchema: { session_id: sessionId },
      outputSchema: {
        session_id: z.string(),
        outcome: z.enum(['requested', 'unchanged', 'not_live']),
        status: z.string(),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args) => {
      const session = await find(context, args.session_id);
      if (isResult(session)) return session;
      const result = await context.source.control(session.id, 'cancel');
      if (result.outcome === 'requested') await cancelServedRun(context, session.id);
      return structured({ session_id: session.id, outcome: result.outcome, status: result.status });
    },
  );
  server.registerTool(
    'send_directive',
    {
      title: 'Send a directive to a session',
      description:
        'Queues an instruction for a session (as rho directive does): the model reads it before its next call; a session that is not running gets it when resumed.',
      inputSchema: { session_id: sessionId, text: z.string().min(1).describe('What the agent should do') },
      outputSchema: { session_id: z.string(), status: z.string(), live: z.boolean() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (args) => {
      if (args.text.trim() === '') return refused('The directive is empty: say what the agent should do.');
      const session = await find(context, args.session_id);
      if (isResult(session)) return session;
      const result = await context.source.sendDirective(session.id, args.text);
      return structured({ session_id: session.id, status: result.status, live: result.live });
    },
  );
  server.registerTool(
    'answer_approval',
    {
      title: 'Approve or deny a waiting tool call',
      description:
        'Answers a tool call that waits for approval (as rho approve / rho deny do); tool_call_id may be left out when exactly one call waits. A denial reason is read by the model.',
      inputSchema: {
        session_id: sessionId,
        decision: z.enum(['approve', 'deny']),
        tool_call_id: z.string().optional().describe('The waiting call (session_status shows waiting_approval)'),
        reason: z.string().optional(),
      },
      outputSchema: {
        session_id: z.string(),
        tool_call_id: z.string(),
        tool_name: z.string(),
        decision: z.enum(['approve', 'deny']),
        outcome: z
          .enum(['answered', 'already_answered'])
          .describe('already_answered: another answer came first; decision is that one, and this one was not recorded'),
        by: z.string().nullable().optional().describe('Who gave the answer that stands, when already_answered'),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    async (args) => {
      const session = await find(context, args.session_id);
      if (isResult(session)) return session;
      const pending = await context.source.pendingApprovals!(session.id);
      const call =
        args.tool_call_id === undefined
          ? pending.length === 1
            ? pending[0]
            : undefined
          : pending.find((entry) => entry.toolCallId === args.tool_call_id);
      if (call === undefined) {
        // A call answered a moment ago no longer waits: say which answer stands, as rho approve does.
        const named = args.tool_call_id ?? (pending.length === 0 ? undefined : null);
        const standing = named === null ? undefined : await lastAnswer(context.source, session.id, named);
        if (standing !== undefined) return alreadyAnswered(session.id, standing);
        return refused(
          pending.length === 0
            ? `No tool call of session ${session.id} waits for approval.`
            : `Name the call to answer: ${pending.map((entry) => `${entry.toolCallId} (${entry.toolName})`).join(', ')} wait${pending.length === 1 ? 's' : ''}.`,
        );
      }
      const result = await context.source.answerApproval!(session.id, call.toolCallId, {
        decision: args.decision,
        by: `mcp-client:${client()}`,
        source: 'operator',
        ...(args.reason === undefined || args.reason.trim() === '' ? {} : { reason: args.reason }),
      });
      if (result.outcome === 'not_pending') {
        const standing = await lastAnswer(context.source, session.id, call.toolCallId);
        if (standing !== undefined) return alreadyAnswered(session.id, { toolName: call.toolName, ...standing });
        return refused(`Call ${call.toolCallId} no longer waits for approval; nothing was recorded.`);
      }
      return structured({
        session_id: session.id,
        tool_call_id: call.toolCallId,
        tool_name: call.toolName,
        decision: result.answer.decision,
        outcome: result.outcome,
        ...(result.outcome === 'already_answered' ? { by: result.answer.by ?? null } : {}),
      });
    },
  );
}
