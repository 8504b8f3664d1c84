import { randomUUID } from 'node:crypto';
import type { ModelToolCall } from '../types.js';

/** One tool-call fragment of a streamed delta (OpenAI wire shape, every field optional). */
export interface ToolCallDelta {
  index?: number;
  id?: string | null;
  type?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
}

interface PartialCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * Puts tool calls back together from streamed deltas, keyed by `index`: ids and names may arrive
 * in any delta (also late, also repeated), arguments arrive in fragments split at any character.
 */
export class ToolCallAssembler {
  private readonly calls = new Map<number, PartialCall>();
  private lastIndex = -1;

  /** Adds one delta. */
  add(delta: ToolCallDelta): void {
    const index = this.indexOf(delta);
    this.lastIndex = index;
    let call = this.calls.get(index);
    if (call === undefined) {
      call = { id: '', name: '', arguments: '' };
      this.calls.set(index, call);
    }
    if (typeof delta.id === 'string' && delta.id !== '') call.id = delta.id;
    const name = delta.function?.name;
    if (typeof name === 'string' && name !== '') call.name = mergeName(call.name, name);
    const fragment = delta.function?.arguments;
    if (typeof fragment === 'string') call.arguments += fragment;
  }

  /** True when no call is being assembled. */
  get empty(): boolean {
    return this.calls.size === 0;
  }

  /** Names of the calls being assembled (`?` while a call's name has not arrived), in index order. */
  pendingNames(): string[] {
    return [...this.calls.entries()].sort(([left], [right]) => left - right).map(([, call]) => (call.name === '' ? '?' : call.name));
  }

  /** The assembled calls in index order; the assembler is empty afterwards. */
  flush(): ModelToolCall[] {
    const finished = [...this.calls.entries()]
      .sort(([left], [right]) => left - right)
      .map(([, call]) => ({
        // A provider that never sent an id still needs one: tool results are matched by it.
        id: call.id !== '' ? call.id : `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
        name: call.name,
        arguments: call.arguments,
      }));
    this.calls.clear();
    this.lastIndex = -1;
    return finished;
  }

  private indexOf(delta: ToolCallDelta): number {
    if (typeof delta.index === 'number') return delta.index;
    // Providers that omit `index`: a new id starts a new call, anything else continues the last.
    if (typeof delta.id === 'string' && delta.id !== '') {
      for (const [index, call] of this.calls) if (call.id === delta.id) return index;
      return this.calls.size === 0 ? 0 : Math.max(...this.calls.keys()) + 1;
    }
    return this.lastIndex >= 0 ? this.lastIndex : 0;
  }
}

// Most providers send the name once; some repeat it in every delta, a few send it cumulatively,
// fewer still in pieces. Handle all of these without doubling a repeated name.
function mergeName(current: string, incoming: string): string {
  if (current === '' || incoming === current || incoming.startsWith(current)) return incoming;
  if (current.endsWith(incoming)) return current;
  return current + incoming;
}
