// Words and text as the completion scripts write them (completion-bash.ts, -zsh.ts, -fish.ts).

/**
 * A verb name, a flag or a fixed value, written into a script unquoted: each is a plain word, and
 * anything else is a mistake in a command's definition, refused before it breaks every script.
 */
export function shellWord(word: string): string {
  if (!/^-{0,2}[A-Za-z0-9_][A-Za-z0-9_.@+,-]*$/.test(word)) throw new Error(`${JSON.stringify(word)} cannot be completed: not a plain word`);
  return word;
}

/** Text in single quotes for sh, bash and zsh: a quote inside closes, adds \', and opens again. */
export function shQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Text in single quotes for fish, where \' and \\ are the escapes inside them. */
export function fishQuote(text: string): string {
  return `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}
