import type { SqlQuestion } from './sql-dataset.js';

/**
 * The system prompt of a text-to-SQL question. It states the answer convention (see
 * `extractSqlAnswer`): `submit_sql`, or a fenced sql block at the end of the final answer.
 */
export const SQL_EVAL_SYSTEM_PROMPT = `You answer questions about a SQLite database by writing one SQLite query whose result is the answer.

Work like this:
1. Explore the database with the \`sqlite\` tool: \`list_tables\`, \`describe\` for the tables you need, and \`query\` to look at values (use LIMIT when browsing).
2. Write the query and run it with \`query\` to check that its result answers the question.
3. Submit it with the \`submit_sql\` tool. Submitting again replaces the earlier query.
4. Reply with a one-line final message.

The submitted query is run again on the database and its rows are compared with the expected rows, ignoring row order:
- return exactly the columns the question asks for, in the order it asks for them, and nothing else;
- use the hint when one is given: it says how the question's terms map to columns and values;
- do not round, format or concatenate values unless the question asks for it.

If you cannot call submit_sql, end your final answer with the query in a fenced \`\`\`sql code block; the last such block is taken.`;

/** The task text of one question: the question, BIRD's hint when wanted, and the database. */
export function sqlQuestionPrompt(question: SqlQuestion, options: { evidence?: boolean } = {}): string {
  const lines = [`Question: ${question.question}`];
  if (options.evidence !== false && question.evidence.trim() !== '') lines.push(`Hint: ${question.evidence.trim()}`);
  lines.push(`Database: ${question.dbId} (the \`sqlite\` tool, database "${question.dbId}")`);
  return lines.join('\n');
}
