import type { Tool } from '@rho/core';
import { defineTool } from '@rho/core';

/** Name of the tool the agent submits its final query with. */
export const SUBMIT_SQL_TOOL_NAME = 'submit_sql';

/** Where the evaluated query came from. */
export type SqlAnswerSource = 'submit_sql' | 'sql_block';

/** The query taken from an agent's work on a question. */
export interface SqlAnswer {
  /** The query, trimmed, without a trailing semicolon. */
  sql: string;
  /** `submit_sql` (the last call of the tool) or `sql_block` (the last fenced sql block of the final answer). */
  source: SqlAnswerSource;
}

/** A `submit_sql` tool for one question, and what it received. */
export interface SubmitSqlTool {
  /** The tool to give the agent. */
  tool: Tool<{ sql: string }>;
  /** The query of the last successful call, if any. */
  submitted(): string | undefined;
}

/**
 * Makes the `submit_sql` tool of one question. Each call replaces the previous submission, so
 * the agent may correct itself; an empty query is refused with a message the model reads.
 * The tool only records: it never runs the query (the runner does, after the session).
 */
export function createSubmitSqlTool(): SubmitSqlTool {
  let last: string | undefined;
  const tool = defineTool({
    name: SUBMIT_SQL_TOOL_NAME,
    description:
      'Submit your final answer: one SQLite query (a SELECT, or WITH ... SELECT) whose result answers the question. ' +
      'It is run on the database after you finish and its rows are compared with the expected rows, ignoring row order. ' +
      'Return exactly the columns asked for, in the order asked, with no extra columns. Calling it again replaces the earlier submission. ' +
      'After submitting, reply with a short final message and stop.',
    parameters: {
      type: 'object',
      properties: { sql: { type: 'string', description: 'The final SQLite query.' } },
      required: ['sql'],
      additionalProperties: false,
    },
    annotations: { readOnly: true },
    async handle({ arguments: { sql } }) {
      const cleaned = cleanSql(sql);
      if (cleaned === '')
        return {
          content: 'The query is empty. Call submit_sql with the SQLite query that answers the question.',
          success: false,
        };
      last = cleaned;
      return {
        content: 'Query submitted for evaluation. Reply with a one-line final message; do not call more tools.',
        success: true,
      };
    },
  });
  return { tool, submitted: () => last };
}

/**
 * The rho answer convention for text-to-SQL: the query of the last `submit_sql` call, else the
 * last fenced code block tagged `sql` in the final answer (```sql ... ```), else none. The tool is
 * the primary channel because it is explicit and cannot be confused with a query the agent only
 * shows while explaining; the fenced block keeps models and servers without tool calling usable.
 */
export function extractSqlAnswer(finalText: string, submitted: string | undefined): SqlAnswer | undefined {
  if (submitted !== undefined && submitted !== '') return { sql: submitted, source: 'submit_sql' };
  const blocks = [...finalText.matchAll(/```[ \t]*sql[ \t]*\r?\n([\s\S]*?)```/gi)];
  for (let index = blocks.length - 1; index >= 0; index -= 1) {
    const sql = cleanSql(blocks[index]![1] ?? '');
    if (sql !== '') return { sql, source: 'sql_block' };
  }
  return undefined;
}

function cleanSql(sql: string): string {
  return sql.trim().replace(/;\s*$/, '').trim();
}
