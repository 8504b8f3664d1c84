#!/usr/bin/env node
// rho-queue-submitter-example [--label L]... [--priority N] [--file tasks.jsonl] [--wait] "prompt"...
//
// Puts tasks in rho's task queue (the fleet's PostgreSQL: --url, else RHO_FLEET_URL; its schema
// --schema, else RHO_QUEUE_SCHEMA, else rho_queue) and prints their ids; with --wait, waits for the
// workers (`rho worker` on any machine) and prints each result as it comes, then exits 0 when all
// of them are done, 1 when one failed, was cancelled or expired.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError } from '@rho/core';
import { createTaskQueue } from '@rho/queue';
import { resultLine, tasksOf, waitForTasks } from './submitter.js';

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      schema: { type: 'string' },
      label: { type: 'string', multiple: true },
      priority: { type: 'string' },
      file: { type: 'string' },
      wait: { type: 'boolean', default: false },
      'poll-ms': { type: 'string' },
    },
  });
  const url = values.url ?? process.env.RHO_FLEET_URL;
  if (url === undefined || url === '') {
    process.stderr.write('No queue database: pass --url postgres://USER@HOST/DB or set RHO_FLEET_URL.\n');
    return 2;
  }
  const tasks = tasksOf({
    prompts: positionals,
    ...(values.file === undefined ? {} : { file: { text: readFileSync(values.file, 'utf8'), name: values.file } }),
    ...(values.label === undefined ? {} : { labels: values.label }),
    ...(values.priority === undefined ? {} : { priority: Number(values.priority) }),
  });
  if (tasks.length === 0) {
    process.stderr.write('Nothing to submit: give prompts, or --file tasks.jsonl.\n');
    return 2;
  }
  const schema = values.schema ?? process.env.RHO_QUEUE_SCHEMA;
  // Submitting makes the queue's schema on first use (a worker does too).
  const queue = await createTaskQueue({ url, ...(schema === undefined || schema === '' ? {} : { schema }) });
  try {
    const ids = await queue.submit(tasks);
    for (const id of ids) process.stdout.write(`${id}\n`);
    if (!values.wait) return 0;
    const finished = await waitForTasks(queue, ids, {
      ...(values['poll-ms'] === undefined ? {} : { pollMs: Number(values['poll-ms']) }),
      onFinal: (task) => process.stdout.write(`${resultLine(task)}\n`),
    });
    return finished.every((task) => task.state === 'done' && task.result?.status === 'completed') ? 0 : 1;
  } finally {
    await queue.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    // A task that does not check (a bad field in the file) is the user's to fix: exit 2.
    process.exitCode = ConfigError.isInstance(error) ? 2 : 1;
  },
);
