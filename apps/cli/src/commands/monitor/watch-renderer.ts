import type { RawTraceRecord } from '@rho/monitor';
import { isKnownRecord } from '@rho/monitor';
import { formatElapsed, formatTokens, toolSignature } from '../../format.js';
import { retryLine } from '../../render.js';
import { styles } from '../../terminal.js';

/**
 * Renders trace records for `rho watch` and the monitor's `watch`: one line per event, with the
 * time it happened. Records of types this version does not know are skipped.
 */
export function createWatchRenderer(write: (text: string) => void, color: boolean): (record: RawTraceRecord) => void {
  const style = styles(color);
  const results = new Map<string, string>();
  return (raw) => {
    if (!isKnownRecord(raw)) return;
    const time = style.dim(clock(raw.ts));
    const say = (text: string) => write(`${time} ${text}\n`);
    const record = raw;
    switch (record.type) {
      case 'run_start':
        say(`${style.bold('▶ run started:')} ${preview(record.prompt, 120)}`);
        break;
      case 'llm_start':
        say(style.dim(`… calling ${record.model} (context ${formatTokens(count(record.context_size))} tokens)`));
        break;
      case 'llm_end': {
        const cost = typeof record.cost_usd === 'number' ? `$${record.cost_usd.toFixed(4)}` : 'cost unknown';
        const duration = typeof record.duration_ms === 'number' ? `, ${formatElapsed(record.duration_ms)}` : '';
        say(`${style.cyan('◆')} ${record.model}: ${formatTokens(count(record.input_tokens))} in, ${formatTokens(count(record.output_tokens))} out, ${cost}${duration}`);
        break;
      }
      case 'message':
        if (record.role === 'tool') results.set(record.tool_call_id, record.content);
        else if (record.role === 'assistant' && typeof record.content === 'string' && record.content.trim() !== '') say(`${style.bold('assistant:')} ${preview(record.content, 200)}`);
        break;
      case 'tool_start':
        say(`${style.cyan('→')} ${toolSignature(record.tool_name, record.tool_args, 200)}`);
        break;
      case 'tool_end': {
        const content = results.get(record.tool_call_id) ?? '';
        results.delete(record.tool_call_id);
        const timing = typeof record.duration_ms === 'number' ? ` ${style.dim(`(${formatElapsed(record.duration_ms)})`)}` : '';
        if (record.success) say(`  ${style.green('✓')} ${record.tool_name} ok${timing}`);
        else say(`  ${style.red('✗')} ${record.tool_name} failed${timing}: ${preview(content, 160)}`);
        break;
      }
      case 'tool_blocked':
        say(`  ${style.yellow('⊘')} ${toolSignature(record.tool_name, record.tool_args, 120)} blocked: ${preview(record.reason, 160)}`);
        break;
      case 'compact':
        say(style.dim(`compacted (${record.trigger}): ${formatTokens(count(record.tokens_before))} -> ${formatTokens(count(record.tokens_after))} tokens`));
        break;
      case 'directive':
        say(`${style.yellow('⚑ directive:')} ${preview(record.text, 200)}`);
        break;
      case 'error':
        say(`${style.red('error:')} ${preview(record.content, 300)}`);
        break;
      case 'retry':
        say(style.yellow(retryLine({ reason: preview(record.reason, 200), delay_ms: count(record.delay_ms), attempt: count(record.attempt), max_attempts: count(record.max_attempts) })));
        break;
      case 'refusal':
        say(`${style.red('refused:')} ${preview(record.content, 300)}`);
        break;
      case 'status':
        say(style.yellow(`status: ${record.status}`));
        break;
      case 'run_end': {
        const usage = typeof record.usage !== 'object' || record.usage === null ? '' : style.dim(` [${formatTokens(count(record.usage.input_tokens))} in, ${formatTokens(count(record.usage.output_tokens))} out, ${record.usage.cost_usd === null ? 'cost unknown' : `$${count(record.usage.cost_usd).toFixed(4)}`}]`);
        say(`${style.bold('■ run ended:')} ${record.status}${record.limit === undefined ? '' : ` (${record.limit})`}${usage}`);
        break;
      }
      case 'usage':
        break;
      default: {
        const unknown: never = record;
        void unknown;
      }
    }
  };
}

/** A number from a record that may come from another writer. */
function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function clock(ts: unknown): string {
  if (typeof ts !== 'string') return '--:--:--';
  const time = Date.parse(ts);
  return Number.isNaN(time) ? '--:--:--' : new Date(time).toISOString().slice(11, 19);
}

/** Traces from other writers (the Python original, older versions) may lack fields: never fail on them. */
function preview(value: unknown, length: number): string {
  const text = typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat;
}
