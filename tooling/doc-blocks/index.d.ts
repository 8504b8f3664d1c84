// Types of index.js, for the documentation tests.

/** A fenced TypeScript or JavaScript block of the documentation. */
export interface Snippet {
  /** Relative to the repository root. */
  file: string;
  /** The line of the opening fence (1-based). */
  line: number;
  language: 'ts' | 'js';
  code: string;
  /** False when `<!-- not run: why -->` stands right before the fence. */
  run: boolean;
  reason?: string;
}

/** A fenced shell block of the documentation marked `<!-- run -->`: its commands run in CI. */
export interface ShellBlock {
  file: string;
  line: number;
  code: string;
}

export function documentationSnippets(root: string): Snippet[];
export function runnableShellBlocks(root: string): ShellBlock[];
