#!/usr/bin/env node
import { createInterface } from 'node:readline';
import { runAgentApp } from './app.js';

// Usage: rho-embed-agent-example [--db ALIAS=FILE.sqlite]... PROMPT
const args = process.argv.slice(2);
const sqlite: Record<string, string> = {};
const words: string[] = [];
for (let index = 0; index < args.length; index += 1) {
  const arg = args[index]!;
  if (arg === '--db') {
    const [alias, path] = (args[(index += 1)] ?? '').split('=');
    if (!alias || !path) {
      process.stderr.write('--db needs ALIAS=FILE.sqlite\n');
      process.exit(2);
    }
    sqlite[alias] = path;
  } else {
    words.push(arg);
  }
}

// One reader for every question, so answers typed (or piped) ahead are not lost.
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const result = await runAgentApp({
  prompt: words.join(' ') || 'What is in this directory?',
  workingDir: process.cwd(),
  sqlite,
  ...(process.env.OPENAI_BASE_URL === undefined ? {} : { baseURL: process.env.OPENAI_BASE_URL }),
  ...(process.env.OPENAI_API_KEY === undefined ? {} : { apiKey: process.env.OPENAI_API_KEY }),
  approve: async (request) => {
    process.stderr.write(
      `approve ${request.toolName} ${JSON.stringify(request.arguments)} (${request.reason ?? 'no reason given'})? [y/N] `,
    );
    const answer = await lines.next();
    const approved = answer.done !== true && /^y(es)?$/i.test(answer.value.trim());
    process.stderr.write(approved ? 'approved\n' : 'rejected\n');
    return approved;
  },
  onText: (text) => process.stdout.write(text),
  onWarning: (message) => process.stderr.write(`warning: ${message}\n`),
});
process.stdout.write('\n');
await lines.return?.();
process.stdin.destroy();
if (result.status !== 'completed') {
  process.stderr.write(`${result.status}: ${result.error?.message ?? ''}\n`);
  process.exitCode = 1;
}
