import type { SqlDecision } from '@rho/permissions';

/** Statements longer than this are judged on every call, so the cache's memory stays bounded. */
const MAX_CACHED_SQL_CHARS = 4096;
/** Decisions kept per server context, the least recently used dropped first. */
const MAX_ENTRIES = 256;

/**
 * The SQL policy's decisions, remembered by statement text for one server context. A decision
 * is a pure function of the text, the dialect and the context (the function catalog and lexical
 * settings read once per connection); one tool has one dialect and one profile, and a context
 * object is never changed once read (a new connection reads a new one, which starts empty). So
 * a statement the model sends again is not parsed again: the MySQL/MariaDB grammar takes
 * 0.05-0.9 ms a parse on a loaded machine, most of a call's fixed cost.
 */
export class DecisionCache {
  private readonly byContext = new WeakMap<object, Map<string, SqlDecision>>();

  get(context: object, sql: string): SqlDecision | undefined {
    const decisions = this.byContext.get(context);
    const decision = decisions?.get(sql);
    if (decisions !== undefined && decision !== undefined) {
      // Most recently used last: a Map iterates in insertion order.
      decisions.delete(sql);
      decisions.set(sql, decision);
    }
    return decision;
  }

  set(context: object, sql: string, decision: SqlDecision): void {
    if (sql.length > MAX_CACHED_SQL_CHARS) return;
    let decisions = this.byContext.get(context);
    if (decisions === undefined) {
      decisions = new Map();
      this.byContext.set(context, decisions);
    }
    decisions.set(sql, decision);
    if (decisions.size > MAX_ENTRIES) decisions.delete(decisions.keys().next().value as string);
  }
}
