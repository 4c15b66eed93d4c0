// Commands the tool suggests are meant to be pasted into a shell: every argument is quoted so the
// shell passes it through as it is (a glob like src/api/** would otherwise be expanded).
import { isPlainShellWord, loopFirst } from "./char-scan.ts";

const isPlain = loopFirst(isPlainShellWord, /^[A-Za-z0-9_@%+=:./-][A-Za-z0-9_@%+=:./#-]*$/);

/** `word` as one shell word: unchanged when it is plain, else in single quotes. */
export function shellQuote(word: string): string {
  return isPlain(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** `git handoff ARGS…` with each argument quoted for the shell: the one way commands are spelled. */
export function handoffCommand(...args: string[]): string {
  return ["git handoff", ...args.map(shellQuote)].join(" ");
}

/** One shell word as written by shellQuote (quoted parts, \' and plain characters). */
export const SHELL_WORD = String.raw`(?:'[^']*'|\\'|[^\s),;'\\])+`;

/** The value a shell reads from a word written by shellQuote. */
export function shellUnquote(word: string): string {
  return word.replace(/'([^']*)'|\\(')/g, (_, quoted: string | undefined, escaped: string | undefined) => quoted ?? escaped ?? "");
}
