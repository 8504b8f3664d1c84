// Writes synthetic session directories (meta.json and trace.jsonl in the shapes rho writes) for
// the dashboard's benchmark and the screenshots of docs/operator-guide.md. Deterministic: the same arguments give the
// same sessions. Real runs are used by the tests; these are only for volume and pictures.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const MODELS = [
  ['gpt-5-mini', 0.25e-6, 2e-6],
  ['gpt-5', 1.25e-6, 10e-6],
  ['claude-sonnet-4', 3e-6, 15e-6],
  ['qwen3-32b', null, null],
];
const PROFILES = ['readonly', 'developer', 'unrestricted'];
const TOOLS = [
  ['read', 40, 0.01],
  ['grep', 120, 0.02],
  ['bash', 900, 0.12],
  ['write', 30, 0.05],
  ['sql', 400, 0.08],
];
const PROMPTS = [
  'Find out why the nightly build fails and propose a fix',
  'Summarise the error logs of the payment service for last week',
  'Which tables hold customer addresses? List their columns',
  'Rename the config option and update every caller',
  'Write a migration that adds an index on orders.created_at',
];

function random(seed) {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
}

/**
 * Writes `count` sessions under `base` (a `sessions` directory). Every tenth is a child of the
 * one before it; `turns` model calls each (default 3). Returns the ids.
 */
export function writeSampleSessions(
  base,
  count,
  { turns = 3, start = Date.parse('2026-11-01T08:00:00Z'), spreadMs = 60_000, hostname = 'build-01' } = {},
) {
  mkdirSync(base, { recursive: true });
  const ids = [];
  for (let index = 0; index < count; index += 1) {
    const next = random(index + 1);
    const id = `s${index.toString(16).padStart(7, '0')}`;
    const directory = join(base, id);
    mkdirSync(directory, { recursive: true });
    const [model, inPrice, outPrice] = MODELS[index % MODELS.length];
    const profile = PROFILES[index % PROFILES.length];
    const prompt = `${PROMPTS[index % PROMPTS.length]} (#${index})`;
    let time = start + index * spreadMs;
    const ts = () => new Date(time).toISOString();
    const lines = [];
    const push = (record) => lines.push(JSON.stringify({ type: record.type, ts: ts(), ...record }));
    push({ type: 'run_start', prompt });
    push({ type: 'message', role: 'user', content: prompt });
    let context = 900;
    let cost = 0;
    let inputTotal = 0;
    let outputTotal = 0;
    for (let turn = 0; turn < turns; turn += 1) {
      push({ type: 'llm_start', model, context_size: context, context_window: 128000 });
      const duration = Math.round(400 + next() * 2500);
      time += duration;
      const input = context;
      const output = Math.round(20 + next() * 300);
      const callCost = inPrice === null ? null : input * inPrice + output * outPrice;
      if (callCost !== null) cost += callCost;
      inputTotal += input;
      outputTotal += output;
      push({
        type: 'llm_end',
        model,
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: 0,
        reasoning_tokens: 0,
        cost_usd: callCost,
        duration_ms: duration,
      });
      const last = turn === turns - 1;
      if (last) {
        push({
          type: 'message',
          role: 'assistant',
          content: 'Done: the cause is a stale lock file; removing it in the build script fixes it.',
        });
        break;
      }
      const [tool, meanMs, failRate] = TOOLS[Math.floor(next() * TOOLS.length)];
      const callId = `call_${turn}`;
      push({
        type: 'message',
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [{ id: callId, type: 'function', function: { name: tool, arguments: '{"path":"."}' } }],
      });
      push({ type: 'tool_start', tool_call_id: callId, tool_name: tool, tool_args: { path: '.' } });
      const toolMs = Math.round(meanMs * (0.3 + next() * 1.4));
      time += toolMs;
      const success = next() > failRate;
      push({ type: 'tool_end', tool_call_id: callId, tool_name: tool, success, duration_ms: toolMs });
      push({
        type: 'message',
        role: 'tool',
        tool_call_id: callId,
        content: success ? 'build.log\nsrc\npackage.json' : 'Error: permission denied',
      });
      context += 400 + Math.round(next() * 1200);
      time += 50;
    }
    push({
      type: 'run_end',
      status: 'completed',
      usage: {
        input_tokens: inputTotal,
        output_tokens: outputTotal,
        cached_tokens: 0,
        reasoning_tokens: 0,
        cost_usd: inPrice === null ? null : cost,
      },
    });
    writeFileSync(join(directory, 'trace.jsonl'), `${lines.join('\n')}\n`);
    const meta = {
      id,
      status: 'completed',
      model,
      profile,
      started_at: new Date(start + index * spreadMs).toISOString(),
      updated_at: ts(),
      hostname,
      first_prompt: prompt,
      ...(inPrice === null ? {} : { cost_usd: cost }),
      parent_id: index % 10 === 9 ? ids[index - 1] : null,
    };
    writeFileSync(join(directory, 'meta.json'), JSON.stringify(meta, null, 2));
    ids.push(id);
  }
  return ids;
}

const FILES = [
  'src/build.ts',
  'src/config.ts',
  'src/orders/repository.ts',
  'scripts/release.sh',
  'test/orders.test.ts',
  'README.md',
];
const WORDS =
  'const value await return import export function result error config build order customer index table query migration lock file cache'.split(
    ' ',
  );

/** Text of about `size` characters made of lines `line(n)`. */
function lines(size, line) {
  const out = [];
  let length = 0;
  for (let number = 1; length < size; number += 1) {
    const text = line(number);
    out.push(text);
    length += text.length + 1;
  }
  return out.join('\n');
}

/** A sentence of `count` words. */
function words(next, count) {
  return Array.from({ length: count }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ');
}

/**
 * One tool call as rho records it: the call (name, arguments), its result message's content (a
 * few hundred bytes to a few KB, shaped as the tool's output is) and the tool_end metadata.
 */
function sampleToolCall(next, callId) {
  const pick = next();
  const file = FILES[Math.floor(next() * FILES.length)];
  const size = Math.round(200 + next() ** 2 * 4500);
  if (pick < 0.3) {
    const content = lines(
      size,
      (number) => `${String(number).padStart(6)}  ${words(next, 3 + Math.floor(next() * 8))};`,
    );
    const total = content.split('\n').length;
    return {
      name: 'read',
      args: { path: file },
      content: `${content}\n[Showing lines 1-${total} of ${total + Math.floor(next() * 400)}]`,
      metadata: { path: `/home/user/project/${file}`, start_line: 1, end_line: total, total_lines: total },
    };
  }
  if (pick < 0.5) {
    const pattern = WORDS[Math.floor(next() * WORDS.length)];
    return {
      name: 'grep',
      args: { pattern, path: 'src' },
      content: lines(
        size,
        () =>
          `${FILES[Math.floor(next() * FILES.length)]}:${1 + Math.floor(next() * 900)}:  ${pattern} ${words(next, 5)}`,
      ),
      metadata: { pattern, matches: Math.round(size / 60) },
    };
  }
  if (pick < 0.8) {
    const command = [
      'pnpm test --filter orders',
      'git status --short',
      'ls -la build',
      'pnpm build',
      'cat build.log | tail -40',
    ][Math.floor(next() * 5)];
    const exit = next() < 0.12 ? 1 : 0;
    const output = lines(size, (number) => `${number % 7 === 0 ? 'WARN' : 'info'} ${words(next, 6)}`);
    return {
      name: 'bash',
      args: { command },
      content: JSON.stringify(
        { output, metadata: { exit_code: exit, duration_seconds: Math.round(next() * 30) } },
        null,
        2,
      ),
      metadata: {
        exit_code: exit,
        command,
        working_dir: '/home/user/project',
        stdout_bytes: output.length,
        stderr_bytes: 0,
      },
      success: exit === 0,
    };
  }
  if (pick < 0.9) {
    const rows = Math.max(2, Math.round(size / 40));
    const header = 'OrderId | CustomerId | Total   | CreatedAt';
    const body = Array.from(
      { length: rows },
      (_, row) =>
        `${String(row + 1).padEnd(7)} | ${String(100 + Math.floor(next() * 900)).padEnd(10)} | ${(next() * 500).toFixed(2).padEnd(7)} | 2026-11-0${1 + (row % 9)}`,
    );
    return {
      name: 'sqlite',
      args: {
        database: 'shop',
        operation: 'query',
        sql: `SELECT OrderId, CustomerId, Total, CreatedAt FROM orders LIMIT ${rows}`,
      },
      content: [header, '--------+------------+---------+-----------', ...body].join('\n'),
      metadata: {
        columns: ['OrderId', 'CustomerId', 'Total', 'CreatedAt'],
        row_count: rows,
        total_rows: rows,
        truncated: false,
      },
    };
  }
  if (pick < 0.96) {
    const old = words(next, 4);
    const replacement = words(next, 5);
    return {
      name: 'edit',
      args: { path: file, old_string: old, new_string: replacement },
      content: `Edited /home/user/project/${file}: exact match`,
      metadata: { path: `/home/user/project/${file}`, strategy: 'exact match' },
    };
  }
  const content = lines(Math.min(size, 1500), () => words(next, 8));
  return {
    name: 'write',
    args: { path: `notes/${callId}.md`, content },
    content: `Created /home/user/project/notes/${callId}.md (${content.length} bytes, ${content.split('\n').length} lines)`,
    metadata: {
      path: `/home/user/project/notes/${callId}.md`,
      size_bytes: content.length,
      lines: content.split('\n').length,
      overwrote: false,
    },
  };
}

/**
 * Writes one long session of at least `records` trace records (default 100,000) under `base`, in
 * the shapes rho writes: runs (the session resumed every few thousand records), each a prompt and
 * turns of a model call (llm_start, llm_end, the assistant's message, mostly with one to three
 * tool calls), tool_start, the tool's result message (a few hundred bytes to a few KB) and
 * tool_end; now and then an approval asked and answered (a denial blocks the call), a failed
 * call, a retry, an operator directive, and two compactions. Deterministic. Returns
 * `{ id, records, bytes }`.
 */
export function writeLargeSession(
  base,
  {
    records = 100_000,
    id = 'big00000',
    start = Date.parse('2026-11-01T08:00:00Z'),
    model = 'gpt-5-mini',
    seed = 7,
  } = {},
) {
  const directory = join(base, id);
  mkdirSync(directory, { recursive: true });
  const next = random(seed);
  const path = join(directory, 'trace.jsonl');
  writeFileSync(path, '');
  let time = start;
  let count = 0;
  let bytes = 0;
  let chunk = [];
  const push = (record) => {
    chunk.push(JSON.stringify({ type: record.type, ...record, ts: new Date(time).toISOString() }));
    count += 1;
    if (chunk.length >= 5000) flush();
  };
  const flush = () => {
    const text = `${chunk.join('\n')}\n`;
    appendFileSync(path, text);
    bytes += Buffer.byteLength(text);
    chunk = [];
  };
  const [, inPrice, outPrice] = MODELS.find(([name]) => name === model) ?? MODELS[0];
  // About 7 records a turn: the context grows so that it nears the window before each compaction.
  const expectedTurns = records / 7;
  const compactAt = [Math.round(expectedTurns * 0.35), Math.round(expectedTurns * 0.7)];
  const growth = Math.round(110_000 / (expectedTurns * 0.35));
  let context = 3000;
  let turn = 0;
  let call = 0;
  let runs = 0;
  let response = 0;
  let cost = 0;
  while (count < records) {
    runs += 1;
    const prompt = runs === 1 ? `${PROMPTS[0]} (a long session)` : `Go on with the next failing package (${runs}).`;
    push({ type: 'run_start', prompt });
    push({ type: 'message', role: 'user', content: prompt });
    let runIn = 0;
    let runOut = 0;
    let runCost = 0;
    // A run of 1,000 to 15,000 records, or what is left.
    const runEnd = Math.min(records, count + 1000 + Math.floor(next() * 14_000));
    for (;;) {
      turn += 1;
      if (compactAt.includes(turn)) {
        push({
          type: 'llm_start',
          model,
          context_size: context,
          context_window: 128000,
          context_window_source: 'catalog',
          purpose: 'compaction',
        });
        time += 4000 + Math.floor(next() * 6000);
        push({
          type: 'llm_end',
          model,
          input_tokens: context,
          output_tokens: 600,
          cache_read_tokens: 0,
          reasoning_tokens: 0,
          cost_usd: context * inPrice + 600 * outPrice,
          duration_ms: 5000,
          finish_reason: 'stop',
          purpose: 'compaction',
        });
        const after = 4000 + Math.floor(next() * 2000);
        push({
          type: 'compact',
          trigger: 'auto',
          tokens_before: context,
          tokens_after: after,
          summary: `Another language model worked on this task and produced a summary of its progress.\n\nSummary: ${words(next, 120)}`,
          kept: [{ role: 'user', content: prompt }],
        });
        context = after;
      }
      if (next() < 0.004) {
        const text = `Also check ${FILES[Math.floor(next() * FILES.length)]} before you go on.`;
        push({ type: 'directive', text, cursor: count });
        push({ type: 'message', role: 'user', content: `[Operator directive] ${text}`, directive: true });
      }
      push({
        type: 'llm_start',
        model,
        context_size: context,
        context_window: 128000,
        context_window_source: 'catalog',
      });
      if (next() < 0.01) {
        push({ type: 'retry', attempt: 1, max_attempts: 3, delay_ms: 1000, reason: '429 Too Many Requests' });
        time += 1000;
      }
      const duration = Math.round(600 + next() * 4000);
      time += duration;
      const input = context;
      const output = Math.round(30 + next() * 400);
      const callCost = input * inPrice + output * outPrice;
      runIn += input;
      runOut += output;
      runCost += callCost;
      const last = count >= runEnd - 8;
      const calls = last
        ? []
        : Array.from({ length: next() < 0.75 ? 1 : next() < 0.7 ? 2 : 3 }, () =>
            sampleToolCall(next, `call_${(call += 1)}`),
          );
      response += 1;
      push({
        type: 'llm_end',
        model,
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: Math.round(input * 0.6),
        reasoning_tokens: 0,
        cost_usd: callCost,
        duration_ms: duration,
        finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
        response_id: `chatcmpl-${response}`,
      });
      const ids = calls.map((_, index) => `call_${call - calls.length + index + 1}`);
      push({
        type: 'message',
        role: 'assistant',
        content:
          calls.length === 0 ? `Done with this part: ${words(next, 30)}.` : next() < 0.5 ? null : `${words(next, 8)}.`,
        ...(calls.length === 0
          ? {}
          : {
              tool_calls: calls.map((tool, index) => ({
                id: ids[index],
                type: 'function',
                function: { name: tool.name, arguments: JSON.stringify(tool.args) },
              })),
            }),
      });
      calls.forEach((tool, index) => {
        const callId = ids[index];
        const dangerous = tool.name === 'bash' || tool.name === 'sqlite';
        if (dangerous && next() < 0.05) {
          push({
            type: 'approval_requested',
            tool_call_id: callId,
            tool_name: tool.name,
            tool_args: tool.args,
            reason: `${tool.name} is a dangerous tool and profile developer requires approval for dangerous tools (approval: dangerous)`,
            expires_at: new Date(time + 3_600_000).toISOString(),
            on_timeout: 'deny',
          });
          push({ type: 'status', status: 'waiting_approval' });
          time += 5000 + Math.floor(next() * 60_000);
          const approve = next() < 0.85;
          push({
            type: 'approval_answered',
            tool_call_id: callId,
            tool_name: tool.name,
            decision: approve ? 'approve' : 'deny',
            scope: 'once',
            source: 'operator',
            by: 'dana@review-host',
            ...(approve ? {} : { reason: 'Not on the release branch.' }),
          });
          push({ type: 'status', status: 'running' });
          if (!approve) {
            push({
              type: 'tool_blocked',
              tool_call_id: callId,
              tool_name: tool.name,
              tool_args: tool.args,
              reason: 'denied by dana@review-host: Not on the release branch.',
            });
            push({
              type: 'message',
              role: 'tool',
              tool_call_id: callId,
              content: 'Not run: denied by dana@review-host: Not on the release branch.',
            });
            return;
          }
        }
        push({ type: 'tool_start', tool_call_id: callId, tool_name: tool.name, tool_args: tool.args });
        const toolMs = Math.round(20 + next() ** 3 * 20_000);
        time += toolMs;
        const success = tool.success ?? next() > 0.03;
        push({
          type: 'message',
          role: 'tool',
          tool_call_id: callId,
          content: success ? tool.content : `Error: ${words(next, 6)}`,
        });
        push({
          type: 'tool_end',
          tool_call_id: callId,
          tool_name: tool.name,
          success,
          duration_ms: toolMs,
          metadata: tool.metadata,
        });
      });
      context += Math.round(growth * (0.5 + next()));
      time += 20;
      if (last) break;
    }
    cost += runCost;
    push({
      type: 'run_end',
      status: 'completed',
      usage: {
        input_tokens: runIn,
        output_tokens: runOut,
        cached_tokens: Math.round(runIn * 0.6),
        reasoning_tokens: 0,
        cost_usd: runCost,
      },
    });
    // The next run starts a while later (the session resumed).
    time += 60_000 + Math.floor(next() * 3_600_000);
  }
  flush();
  const meta = {
    id,
    status: 'completed',
    model,
    profile: 'developer',
    started_at: new Date(start).toISOString(),
    updated_at: new Date(time).toISOString(),
    hostname: 'build-01',
    first_prompt: `${PROMPTS[0]} (a long session)`,
    cost_usd: cost,
    parent_id: null,
  };
  writeFileSync(join(directory, 'meta.json'), JSON.stringify(meta, null, 2));
  return { id, records: count, bytes, runs };
}
