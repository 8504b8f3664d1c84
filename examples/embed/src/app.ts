import { Agent } from '@rho/core';
import type { RunResult } from '@rho/core';
import { wordCountTool } from 'rho-example-word-count';

/** Options of {@link runApp}. */
export interface AppOptions {
  prompt: string;
  workingDir: string;
  model?: string;
  baseURL?: string;
  apiKey?: string;
  /** Receives the answer as it streams. */
  onText?: (text: string) => void;
}

/** Runs one task with an agent that has only the word-count tool. */
export async function runApp(options: AppOptions): Promise<RunResult> {
  const agent = new Agent({
    systemPrompt: 'You answer questions about files. Use word_count to measure them.',
    model: options.model ?? 'gpt-4o-mini',
    tools: [wordCountTool],
    workingDir: options.workingDir,
    clientOptions: {
      ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
      apiKey: options.apiKey ?? 'no-key',
      maxRetries: 2,
    },
  });
  const session = agent.createSession();
  return session.run(options.prompt, {
    onEvent: (event) => {
      if (event.type === 'text') options.onText?.(event.text);
    },
  });
}
