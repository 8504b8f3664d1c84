// marked-terminal ships no types (and @types/marked-terminal lags its releases): what rho uses.
declare module 'marked-terminal' {
  /** A marked extension rendering Markdown for a terminal. */
  export function markedTerminal(
    options?: Record<string, unknown>,
    highlightOptions?: Record<string, unknown>,
  ): unknown;
}
