import { randomUUID } from 'node:crypto';
import type { ModelToolCall } from '../types.js';
import { extraContentOf, restartsArguments } from './dialects/gemini.js';
import { startsNewCallAtSameIndex } from './dialects/relay.js';

/** One tool-call fragment of a streamed delta (OpenAI wire shape, every field optional). */
export interface ToolCallDelta {
  index?: number;
  id?: string | null;
  type?: string | null;
  /** `arguments` is a string fragment; some providers send the whole arguments as an object. */
  function?: { name?: string | null; arguments?: unknown } | null;
  /** Provider data to send back with the call (Gemini's thought signature). */
  extra_content?: unknown;
}

interface PartialCall {
  index: number;
  id: string;
  name: string;
  arguments: string;
  extraContent: Record<string, unknown> | undefined;
}

/**
 * Puts tool calls back together from streamed deltas, keyed by `index`: ids and names may arrive
 * in any delta (also late, also repeated), arguments arrive in fragments split at any character.
 * Dialects (see `dialects/`): a new id at an index already taken starts a new call (relays that
 * number every call 0), arguments sent as an object are taken whole, a complete object followed
 * by a new one replaces it (Gemini's `{}` placeholder), `extra_content` is kept.
 */
export class ToolCallAssembler {
  /** Every call, in the order it started. */
  private calls: PartialCall[] = [];
  /** The call currently receiving fragments for each index. */
  private readonly byIndex = new Map<number, PartialCall>();
  private last: PartialCall | undefined;

  /**
   * Adds the tool-call fragments of one delta. Fragments without `index` or id in a list of
   * several are told apart by their position in it (Moonshot sends the arguments of all calls in
   * one delta that way).
   */
  addAll(deltas: readonly ToolCallDelta[]): void {
    if (deltas.length === 1) this.add(deltas[0]!);
    else for (let position = 0; position < deltas.length; position += 1) this.add(deltas[position]!, position);
  }

  /** Adds one delta; `position` is its place in a list of several fragments. */
  add(delta: ToolCallDelta, position?: number): void {
    const call = this.callFor(delta, position);
    this.last = call;
    if (typeof delta.id === 'string' && delta.id !== '') call.id = delta.id;
    const fn = delta.function;
    if (fn !== undefined && fn !== null) {
      const name = fn.name;
      if (typeof name === 'string' && name !== '') call.name = mergeName(call.name, name);
      const fragment = fn.arguments;
      if (typeof fragment === 'string') {
        if (fragment !== '')
          call.arguments = restartsArguments(call.arguments, fragment) ? fragment : call.arguments + fragment;
      } else if (fragment !== null && typeof fragment === 'object') {
        // The whole arguments as a JSON value instead of a string (llm-venice#45).
        call.arguments = JSON.stringify(fragment);
      }
    }
    if (delta.extra_content !== undefined) {
      const extra = extraContentOf(delta as Record<string, unknown>);
      if (extra !== undefined) call.extraContent = extra;
    }
  }

  /** True when no call is being assembled. */
  get empty(): boolean {
    return this.calls.length === 0;
  }

  /** Names of the calls being assembled (`?` while a call's name has not arrived), in index order. */
  pendingNames(): string[] {
    return this.ordered().map((call) => (call.name === '' ? '?' : call.name));
  }

  /**
   * The assembled calls in index order; the assembler is empty afterwards. With `finishReason`
   * `length`, calls whose arguments are not complete JSON are marked `truncated`.
   */
  flush(finishReason: string | null = null): ModelToolCall[] {
    const finished = this.ordered().map((call) => {
      const result: ModelToolCall = {
        // A provider that never sent an id still needs one: tool results are matched by it.
        id: call.id !== '' ? call.id : `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
        name: call.name,
        arguments: call.arguments,
      };
      if (call.extraContent !== undefined) result.extraContent = call.extraContent;
      if (finishReason === 'length' && !isCompleteJson(call.arguments)) result.truncated = true;
      return result;
    });
    this.calls = [];
    this.byIndex.clear();
    this.last = undefined;
    return finished;
  }

  private ordered(): PartialCall[] {
    // Stable: calls that share an index keep the order they arrived in.
    return this.calls.length < 2 ? this.calls : [...this.calls].sort((left, right) => left.index - right.index);
  }

  private callFor(delta: ToolCallDelta, position: number | undefined): PartialCall {
    const hasId = typeof delta.id === 'string' && delta.id !== '';
    const index =
      typeof delta.index === 'number' ? delta.index : position !== undefined && !hasId ? position : undefined;
    if (index !== undefined) {
      const current = this.byIndex.get(index);
      if (current !== undefined && !startsNewCallAtSameIndex(current.id, current.name, delta.id)) return current;
      return this.start(index);
    }
    // Providers that omit `index`: a new id starts a new call, anything else continues the last.
    if (hasId) {
      for (const call of this.calls) if (call.id === delta.id) return call;
      return this.start(this.calls.length === 0 ? 0 : Math.max(...this.calls.map((call) => call.index)) + 1);
    }
    return this.last ?? this.start(0);
  }

  private start(index: number): PartialCall {
    const call: PartialCall = { index, id: '', name: '', arguments: '', extraContent: undefined };
    this.calls.push(call);
    this.byIndex.set(index, call);
    return call;
  }
}

function isCompleteJson(text: string): boolean {
  if (text.trim() === '') return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

// Most providers send the name once; some repeat it in every delta, a few send it cumulatively,
// fewer still in pieces. Handle all of these without doubling a repeated name.
function mergeName(current: string, incoming: string): string {
  if (current === '' || incoming === current || incoming.startsWith(current)) return incoming;
  if (current.endsWith(incoming)) return current;
  return current + incoming;
}
