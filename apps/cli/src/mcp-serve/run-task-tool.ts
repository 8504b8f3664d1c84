import { join } from 'node:path';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { chooseDirectory, chooseProfile } from './allowlist.js';
import type { ChildEvent } from './child-run.js';
import { startChildRun } from './child-run.js';
import type { ServeContext } from './serve-context.js';
import { cancelServedRun } from './serve-context.js';
import { mcpLabels, outputShape, readSessionOutput } from './session-views.js';
import { refused, structured } from './tool-results.js';

const runTaskOutput = {
  ...outputShape,
  waited: z.boolean().describe('Whether the call waited for the session to end'),
  profile: z.string(),
  working_dir: z.string(),
  error: z.string().nullable(),
};

/** `run_task`: starts a session as a child `rho`, under an allowed profile and directory; with `wait`, its answer. */
export function registerRunTask(
  server: McpServer,
  context: ServeContext,
  connection: number,
  client: () => string,
): void {
  server.registerTool(
    'run_task',
    {
      title: 'Run a task in a new rho session',
      description: `Starts a rho agent session on a task. profile is one of ${context.allow.profiles.join(', ')} (default ${context.allow.defaultProfile}); working_dir must lie in ${context.allow.directories.join(', ')}. Without wait it returns the session id at once (follow it with session_status and session_output); with wait it reports progress and returns the answer. A tool call needing approval waits for answer_approval.`,
      inputSchema: {
        prompt: z.string().min(1).describe('The task, in words'),
        profile: z
          .string()
          .optional()
          .describe(`Permission profile, one of: ${context.allow.profiles.join(', ')}`),
        working_dir: z.string().optional().describe('Working directory of the tools (relative: to the first allowed)'),
        max_turns: z.number().int().min(1).optional().describe('Stop after this many model calls'),
        max_tokens: z.number().int().min(1).optional().describe('Stop when the session has used this many tokens'),
        max_cost_usd: z.number().positive().optional().describe('Stop when the session has cost this many USD'),
        wait: z.boolean().optional().describe('Wait for the session to end and return its answer (default false)'),
      },
      outputSchema: runTaskOutput,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    async (args, extra): Promise<CallToolResult> => {
      const profile = chooseProfile(context.allow, args.profile);
      if ('refusal' in profile) return refused(profile.refusal);
      const directory = chooseDirectory(context.allow, args.working_dir);
      if ('refusal' in directory) return refused(directory.refusal);
      if (context.runs.size + context.starting >= context.settings.maxConcurrent)
        return refused(
          `This server already runs ${context.settings.maxConcurrent} sessions (mcp_serve.max_concurrent): wait for one to end, or cancel one.`,
        );
      const run = startChildRun(
        {
          prompt: args.prompt,
          profile: profile.profile,
          workingDir: directory.directory,
          ...(args.max_turns === undefined ? {} : { maxTurns: args.max_turns }),
          ...(args.max_tokens === undefined ? {} : { maxTokens: args.max_tokens }),
          ...(args.max_cost_usd === undefined ? {} : { maxCostUsd: args.max_cost_usd }),
          labels: mcpLabels(client()),
        },
        context.child,
      );
      const token = extra._meta?.progressToken;
      const progress = token === undefined ? undefined : progressReporter(token, extra.sendNotification);
      const stopListening = progress === undefined ? () => {} : run.onEvent(progress.listener);
      const onAbort = () => {
        void run.sessionId.then(
          (id) => cancelServedRun(context, id),
          () => {},
        );
        run.interrupt();
      };
      context.starting += 1;
      let sessionId: string;
      try {
        sessionId = await run.sessionId;
      } catch (error) {
        stopListening();
        return refused(`The session could not start: ${(error as Error).message}`);
      } finally {
        context.starting -= 1;
      }
      context.runs.set(sessionId, { sessionId, run, connection });
      void run.ended.then(() => context.runs.delete(sessionId));
      const base = {
        session_id: sessionId,
        profile: profile.profile,
        working_dir: directory.directory,
      };
      if (args.wait !== true) {
        stopListening();
        return structured({
          ...base,
          status: 'running',
          waited: false,
          answer: null,
          tool_calls: [],
          input_tokens: 0,
          output_tokens: 0,
          cost_usd: null,
          error: null,
        });
      }
      if (extra.signal.aborted) onAbort();
      else extra.signal.addEventListener('abort', onAbort, { once: true });
      const end = await run.ended;
      extra.signal.removeEventListener('abort', onAbort);
      stopListening();
      // The progress notifications go out before the result, which ends the client's listening.
      await progress?.sent();
      const listed = await context.source.get(sessionId);
      const status = listed?.status ?? end.status;
      const output = readSessionOutput(join(context.sessionsDir, sessionId), sessionId, status);
      return structured({
        ...output,
        ...base,
        answer: output.answer ?? end.answer ?? null,
        waited: true,
        error: end.error ?? null,
      });
    },
  );
}

type Notify = (notification: {
  method: 'notifications/progress';
  params: { progressToken: string | number; progress: number; message: string };
}) => Promise<void>;

/** Progress notifications of a waiting run_task: the turn, the tool being called, the tokens so far. */
function progressReporter(
  token: string | number,
  send: Notify,
): { listener: (event: ChildEvent) => void; sent: () => Promise<void> } {
  let last: Promise<void> = Promise.resolve();
  let progress = 0;
  let turn = 0;
  let input = 0;
  let output = 0;
  const tokens = () => `${input} tokens in, ${output} out`;
  const listener = (event: ChildEvent) => {
    let message: string | undefined;
    if (event.type === 'llm_start' && event.purpose === undefined) {
      turn += 1;
      message = `turn ${turn}: calling the model (${tokens()})`;
    } else if (event.type === 'llm_end') {
      input += typeof event.input_tokens === 'number' ? event.input_tokens : 0;
      output += typeof event.output_tokens === 'number' ? event.output_tokens : 0;
      message = `turn ${turn}: the model answered (${tokens()})`;
    } else if (event.type === 'tool_start') {
      message = `turn ${turn}: tool ${String(event.tool_name)} (${tokens()})`;
    } else if (event.type === 'approval_requested') {
      message = `turn ${turn}: tool ${String(event.tool_name)} waits for approval (call ${String(event.tool_call_id)}): answer_approval`;
    }
    if (message === undefined) return;
    progress += 1;
    last = send({ method: 'notifications/progress', params: { progressToken: token, progress, message } }).catch(
      () => {},
    );
  };
  return { listener, sent: () => last };
}
