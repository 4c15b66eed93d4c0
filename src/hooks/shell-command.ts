// Commands an agent runs through its shell tool. Two things are read from them: an apply_patch run
// (Codex applies those itself, so they are edits and are checked like apply_patch), and, for any
// other command, the words that look like paths: a word scan cannot tell a read from a write, so
// those are only ever warned about.

/** `apply_patch` / `applypatch` as a command: at the start, after a separator, or after `sh -c '`. */
const RUNS_PATCH = /(?:^|[;&|(\n`]|\$\(|\b(?:ba|z)?sh\s+-l?c\s+['"]?)\s*(?:\S*\/)?(?:apply_patch|applypatch)\b/;
const BEGIN = "*** Begin Patch";
const END = "*** End Patch";

/** The patch an apply_patch command applies (heredoc or quoted argument), or null if it runs none. */
export function shellPatch(command: string): string | null {
  if (!RUNS_PATCH.test(command)) return null;
  const start = command.indexOf(BEGIN);
  if (start === -1) return null;
  const end = command.indexOf(END, start);
  return command.slice(start, end === -1 ? undefined : end + END.length);
}

const MAX_WORDS = 64;
/** Shell operators and redirections split words (outside quotes). */
const SEPARATOR = /[\s;&|()<>`]/;

/**
 * The command's words as the shell reads its quoting: a quoted part is one word with its spaces
 * (`> "dir with space/f.ts"` names one file), the quotes dropped, a backslash outside single quotes
 * taking the next character as it is. Nothing is expanded.
 */
function splitWords(command: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"' && i + 1 < command.length) word += command[++i];
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === "\\" && i + 1 < command.length) {
      word += command[++i];
      inWord = true;
    } else if (SEPARATOR.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/**
 * Words of a command that could name a file: they hold a `/` or a `.`, or are not options. Flags,
 * variables and the command's own name are left out; the lease check decides the rest.
 */
export function shellWords(command: string): string[] {
  const out: string[] = [];
  for (const raw of splitWords(command)) {
    const w = raw.replace(/^[0-9]*>+&?/, "");
    if (!w || w.startsWith("-") || w.includes("$") || w.includes("=") || w.includes("\0")) continue;
    if (!/[./]/.test(w)) continue;
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(w)) continue; // URLs
    if (!out.includes(w)) out.push(w);
    if (out.length >= MAX_WORDS) break;
  }
  return out;
}
