// Tests of a string's characters written as loops, for questions a one-shot process asks once
// per path or answer: a regular expression is compiled at its first run in a process (8-40 us each on this
// machine, `node -e` with a fresh literal per test), and the pre-edit hook ran a dozen distinct
// ones before it answered, each once. Each function answers exactly as the pattern in its comment.
// Not for tests run per lease or per ref: a loop run thousands of times in a cold process is
// marked for optimisation and compiled on another thread (check.ts GLOB_CHAR), a pattern is not.

const isAlpha = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/** `/[\x00-\x1f]/` */
export function hasControlChar(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) < 0x20) return true;
  return false;
}

/** `/[@!+*?]\(/`: an extglob's opening. */
export function hasExtglob(s: string): boolean {
  for (let i = s.indexOf("(", 1); i > 0; i = s.indexOf("(", i + 1)) {
    const c = s.charCodeAt(i - 1);
    if (c === 64 || c === 33 || c === 43 || c === 42 || c === 63) return true; // @ ! + * ?
  }
  return false;
}

/** `/^[A-Za-z]:\//`: a Windows drive's root. */
export function startsWithDrive(s: string): boolean {
  return s.length >= 3 && isAlpha(s.charCodeAt(0)) && s.charCodeAt(1) === 58 && s.charCodeAt(2) === 47;
}

/** `/(^|[/\\])\.\.([/\\]|$)/`: a `..` segment, with either slash as a separator. */
export function hasDotDotSegment(s: string): boolean {
  for (let i = s.indexOf(".."); i >= 0; i = s.indexOf("..", i + 1)) {
    const before = i === 0 ? 47 : s.charCodeAt(i - 1);
    const after = i + 2 === s.length ? 47 : s.charCodeAt(i + 2);
    if ((before === 47 || before === 92) && (after === 47 || after === 92)) return true;
  }
  return false;
}

/** `/^\w+$/`: letters, digits and `_` only, at least one. */
export function isWordText(s: string): boolean {
  if (!s.length) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!(isAlpha(c) || (c >= 48 && c <= 57) || c === 95)) return false;
  }
  return true;
}
