// One line of a git config file as config-read.ts reads it, scanned by hand. These readers were
// regular expressions (kept beside each function, and in test/config-line.test.ts, which checks
// that both read every line alike): a cold process compiles each pattern it runs, 30 to 100 us
// apiece, and compiles it again to machine code on its second use, so the four of them cost a
// one-shot command ~0.4 ms before its store was open. A loop over the characters is compiled
// ahead, into the code cache the bundles load with.

/** `[name]` or `[name "subsection"]`, then nothing or a comment; null when the line is another header form. */
// /^\[\s*([A-Za-z0-9-]+)\s*(?:"([^"\\]*)")?\s*\]\s*(?:[#;].*)?$/
export function headerOf(line: string): { name: string; subsection: string | null } | null {
  const n = line.length;
  if (line.charCodeAt(0) !== 0x5b) return null; // [
  let i = skipSpace(line, 1);
  const start = i;
  while (i < n && isNameChar(line.charCodeAt(i))) i++;
  if (i === start) return null;
  const name = line.slice(start, i);
  i = skipSpace(line, i);
  let subsection: string | null = null;
  if (line.charCodeAt(i) === 0x22) {
    const from = ++i;
    while (i < n && line.charCodeAt(i) !== 0x22 && line.charCodeAt(i) !== 0x5c) i++;
    if (line.charCodeAt(i) !== 0x22) return null; // a backslash, or no closing quote
    subsection = line.slice(from, i++);
    i = skipSpace(line, i);
  }
  if (line.charCodeAt(i) !== 0x5d) return null; // ]
  i = skipSpace(line, i + 1);
  return i === n || (isCommentChar(line.charCodeAt(i)) && !hasLineBreak(line, i)) ? { name, subsection } : null;
}

/**
 * `key`, `key = value` (value: what follows the `=` and the blanks after it, to the line's end),
 * or null when the line is none of those.
 */
// /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/
export function keyLineOf(line: string): { key: string; value: string | undefined } | null {
  const n = line.length;
  if (!isLetter(line.charCodeAt(0))) return null;
  let i = 1;
  while (i < n && isNameChar(line.charCodeAt(i))) i++;
  const key = line.slice(0, i);
  i = skipSpace(line, i);
  if (i === n) return { key, value: undefined };
  if (line.charCodeAt(i) !== 0x3d) return null; // =
  i = skipSpace(line, i + 1);
  return hasLineBreak(line, i) ? null : { key, value: line.slice(i) };
}

/** A value without its trailing comment (blanks then `#` or `;` and the rest), trimmed. */
// value.replace(/\s+[#;].*$/, "").trim(), for a value without a line break (keyLineOf's)
export function withoutComment(value: string): string {
  for (let j = 1; j < value.length; j++) {
    // The blanks before the mark go with the trim.
    if (isCommentChar(value.charCodeAt(j)) && isSpace(value.charCodeAt(j - 1))) return value.slice(0, j).trim();
  }
  return value.trim();
}

/** A value this reader does not unquote or unescape, nor tell from a comment. */
// /["\\#;]/.test(value)
export function needsUnquoting(value: string): boolean {
  for (let j = 0; j < value.length; j++) {
    const c = value.charCodeAt(j);
    if (c === 0x22 || c === 0x5c || isCommentChar(c)) return true;
  }
  return false;
}

function isCommentChar(c: number): boolean {
  return c === 0x23 || c === 0x3b; // # ;
}

function isLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

function isNameChar(c: number): boolean {
  return isLetter(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d;
}

/** What `.` does not match: a regular expression's line terminators. */
function hasLineBreak(s: string, from: number): boolean {
  for (let j = from; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029) return true;
  }
  return false;
}

function skipSpace(s: string, i: number): number {
  while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  return i;
}

/** What `\s` matches (and String.prototype.trim removes): ECMAScript's white space and line terminators. */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}
