import { clipWords, formatElapsed, formatTokens } from './format.js';
import type { styles } from './terminal.js';

const SPINNER_FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** The phase the status line names. */
export type Phase =
  | { kind: 'model' }
  | { kind: 'streaming' }
  | { kind: 'thinking' }
  | { kind: 'tool'; name: string }
  | { kind: 'retry'; until: number; reason: string }
  | { kind: 'idle' };

/** Options of {@link StatusLine}. */
export interface StatusLineOptions {
  /** Where the line is drawn (the renderer's gathered stderr). */
  err: (text: string) => void;
  style: ReturnType<typeof styles>;
  /** Width the line is clipped to. */
  width: number;
  /** Draw it at all (a live run with a terminal on stderr); the phase and counters are kept either way. */
  enabled: boolean;
  /** Whether the answer is in the middle of a line (then nothing is drawn under it). */
  midLine: () => boolean;
  /** The model's context window in tokens, when known (for the context percentage). */
  contextWindow?: () => number | undefined;
}

/**
 * The live status line of the event renderer: the phase (`waiting for the model 3s`, `running
 * bash 1s`, `retrying in 4 s`), the time of the run, its tokens and the context, redrawn every
 * 100 ms on stderr while the model or a tool works, cleared before anything else is written.
 */
export class StatusLine {
  /** When the current run started. */
  runStarted = Date.now();
  /** What the run is doing now. */
  phase: Phase = { kind: 'idle' };
  /** Input tokens of the last model call (the context's size), when known. */
  contextTokens: number | undefined;
  /** Tokens of the run's finished model calls. */
  runTokens = 0;
  /** Characters streamed by the model call under way (a quarter of them are counted as tokens). */
  streamedChars = 0;
  private phaseStarted = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;
  private drawn = false;

  constructor(private readonly options: StatusLineOptions) {}

  /** Clears the line, when it is drawn, until it is drawn again. */
  clear(): void {
    if (this.drawn) this.options.err('\r\u001b[K');
    this.drawn = false;
  }

  /** Enters a phase: draws the line (and keeps redrawing it), or stops it while the answer streams or nothing happens. */
  set(next: Phase): void {
    const phase = this.phase;
    if (next.kind !== phase.kind || (next.kind === 'tool' && phase.kind === 'tool' && next.name !== phase.name))
      this.phaseStarted = Date.now();
    this.phase = next;
    if (!this.options.enabled) return;
    if (next.kind === 'idle') {
      this.stop();
      return;
    }
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.draw(), 100);
      this.timer.unref();
    }
    this.draw();
  }

  /** Stops redrawing and clears the line. */
  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.clear();
  }

  /** Draws the line again now (after the answer streamed more), when it is running. */
  redraw(): void {
    if (this.timer !== undefined) this.draw();
  }

  private draw(): void {
    const { err, style } = this.options;
    // Never in the middle of a line of the answer: it would interleave with it.
    if (this.options.midLine()) return;
    this.frame = (this.frame + 1) % SPINNER_FRAMES.length;
    err(`\r\u001b[K${style.cyan(SPINNER_FRAMES[this.frame]!)} ${style.dim(this.text())}`);
    this.drawn = true;
  }

  private text(): string {
    const since = (start: number) => formatElapsed(Date.now() - start).replace(/^\d+ms$/, '0s');
    const phase = this.phase;
    const phaseText = (() => {
      switch (phase.kind) {
        case 'model':
          return `waiting for the model ${since(this.phaseStarted)}`;
        case 'streaming':
          return `streaming ${since(this.phaseStarted)}`;
        case 'thinking':
          return 'thinking';
        case 'tool':
          return `running ${phase.name} ${since(this.phaseStarted)}`;
        case 'retry':
          // Once the backoff is over, the retried request is waiting for the model again.
          if (Date.now() >= phase.until) return `waiting for the model (retried) ${since(phase.until)}`;
          return `${clipWords(phase.reason, 60)}: retrying in ${Math.ceil((phase.until - Date.now()) / 1000)} s`;
        case 'idle':
          return 'working';
      }
    })();
    const tokens = this.runTokens + Math.round(this.streamedChars / 4);
    const window = this.options.contextWindow?.();
    const context =
      this.contextTokens === undefined
        ? ''
        : window === undefined || window <= 0
          ? ` · context ${formatTokens(this.contextTokens)}`
          : ` · context ${Math.min(999, Math.round((this.contextTokens / window) * 100))}%`;
    return clipWords(
      `${phaseText} · ${since(this.runStarted)} in all · ${formatTokens(tokens)} tokens${context} · Ctrl+C cancels`,
      this.options.width - 4,
    );
  }
}
