/** Quotes one word for a POSIX shell: `'...'` with embedded quotes spliced in. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Quotes every word and joins them with spaces. */
export function shellJoin(words: readonly string[]): string {
  return words.map(shellQuote).join(' ');
}
