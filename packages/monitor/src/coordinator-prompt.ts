import type { SessionContext } from './session-context.js';

/** Options of {@link buildCoordinatorPrompt}. */
export interface CoordinatorPromptOptions {
  /** What the operator wants from the coordinator; by default: combine what the agents know and propose next steps. */
  task?: string;
}

/**
 * The first prompt of a coordinating agent: every chosen agent's task, status and transcript,
 * then the coordinator's job. Operators steer the original agents with `rho directive`; the
 * prompt tells the coordinator so, so it can suggest directives by session id.
 */
export function buildCoordinatorPrompt(
  contexts: readonly SessionContext[],
  options: CoordinatorPromptOptions = {},
): string {
  const sections = contexts.map((context, index) => {
    const header = `## Agent ${index + 1}: session ${context.id} (status: ${context.status}${context.model === undefined ? '' : `, model: ${context.model}`})`;
    const task = `Task: ${context.task ?? '(unknown)'}`;
    const note = context.truncated ? '\n(Older parts of this transcript were left out.)' : '';
    return `${header}\n${task}${note}\n\n<context session="${context.id}">\n${context.transcript}\n</context>`;
  });
  const job =
    options.task ??
    'Combine what these agents have learned: summarise what each one knows and has done, point out overlaps, conflicts and gaps between them, and propose the next steps for each agent (the operator can send them to an agent with `rho directive <session> <text>`).';
  return [
    `[rho connect] You are the coordinator of ${contexts.length} rho agent${contexts.length === 1 ? '' : 's'} (sessions ${contexts.map((context) => context.id).join(', ')}). Below is the context each of them has built so far, exported from its trace.`,
    ...sections,
    `## Your job\n${job}`,
  ].join('\n\n');
}
