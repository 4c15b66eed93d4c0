// Tests of a string's characters written as loops, for questions a one-shot process asks once
// per path or answer: a regular expression is compiled at its first run in a process (8-40 us each on this
// machine, `node -e` with a fresh literal per test), and the pre-edit hook ran a dozen distinct
// ones before it answered, each once. Each function answers exactly as the pattern in its comment.
// Not for tests run per lease or per ref: a loop run thousands of times in a cold process is
// marked for optimisation and compiled on another thread (check.ts GLOB_CHAR), a pattern is not.
// A test asked a few times by the hook and thousands of times by a listing goes through loopFirst.

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

/**
 * A pattern's test, answered by `loop` for a process's first `loops` questions and by the pattern
 * after them. The pre-edit hook (a one-shot process) asks each of these a few times before it
 * answers, and V8 compiles a pattern at its first run and again, to machine code, at its second
 * (~20-40 us each in a cold process); a process that asks thousands (a listing of every task)
 * would have V8 optimise the loop on another thread, which costs it more than the pattern's runs
 * (`task list` at 1,000 tasks: +8% CPU with the loops alone), and so would one long text (the
 * lease listing's, neutralised whole): a text longer than `longest` goes to the pattern.
 * `pattern` must not be global.
 */
export function loopFirst(loop: (s: string) => boolean, pattern: RegExp, loops = 16, longest = 1024): (s: string) => boolean {
  let left = loops;
  return (s) => {
    if (left <= 0 || s.length > longest) return pattern.test(s);
    left--;
    return loop(s);
  };
}

const isAlnum = (c: number): boolean => isAlpha(c) || (c >= 48 && c <= 57);

/** `/^[A-Za-z0-9][A-Za-z0-9._@+-]*$/`: a ref component's characters (ids.ts, through loopFirst). */
export function isIdText(s: string): boolean {
  if (!s.length || !isAlnum(s.charCodeAt(0))) return false;
  for (let i = 1; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!(isAlnum(c) || c === 46 || c === 95 || c === 64 || c === 43 || c === 45)) return false; // . _ @ + -
  }
  return true;
}

/** `/^[0-9a-f]{40,64}$/`: an object id as git writes it, SHA-1 or SHA-256 (ref-files.ts, through loopFirst). */
export function isObjectIdText(s: string): boolean {
  if (s.length < 40 || s.length > 64) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/** `/^[A-Za-z0-9_@%+=:./-][A-Za-z0-9_@%+=:./#-]*$/`: a word the shell passes through unquoted (shell-quote.ts, through loopFirst). */
export function isPlainShellWord(s: string): boolean {
  if (!s.length) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // _ @ % + = : . / - and, after the first, #
    if (!(isAlnum(c) || c === 95 || c === 64 || c === 37 || c === 43 || c === 61 || c === 58 || c === 46 || c === 47 || c === 45 || (c === 35 && i > 0))) return false;
  }
  return true;
}

/** `/[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/`: what neutralise escapes (present/untrusted.ts, through loopFirst). */
export function hasUnsafeChar(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c < 0x20 && c !== 9 && c !== 10) || (c >= 0x7f && (c <= 0x9f || c === 0x61c || c === 0x200e || c === 0x200f || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)))) return true;
  }
  return false;
}
