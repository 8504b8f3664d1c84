/**
 * What must be released before rho exits (an execution backend's container or remote sandbox),
 * including on the exits that skip `finally` blocks: a second Ctrl+C and SIGTERM in the REPL.
 */
const closers = new Set<() => Promise<void>>();

/** Registers `close` to run before any exit; returns the function that unregisters it. */
export function closeOnExit(close: () => Promise<void>): () => void {
  closers.add(close);
  return () => closers.delete(close);
}

/** Runs every registered closer (at most `limitMs`), then exits with `code`. */
export function exitAfterClosing(code: number, limitMs = 10_000): void {
  const pending = [...closers].map((close) => close().catch(() => {}));
  closers.clear();
  let timer: NodeJS.Timeout | undefined;
  void Promise.race([
    Promise.all(pending),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, limitMs);
    }),
  ]).finally(() => {
    clearTimeout(timer);
    process.exit(code);
  });
}
