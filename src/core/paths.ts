// Paths and globs as leases and checks see them: repo-relative, POSIX separators, no `.` or `..`
// segments. Pure string work (node:path/posix only), so the same rules hold in every front end.
// A backslash is a separator only on Windows; elsewhere it is a character of a file name like any
// other, so a lease pattern holding one names that character, never an escape (see globSource).
import { posix } from "node:path";
import { braceExpand } from "minimatch";
import { hasControlChar, hasExtglob, startsWithDrive } from "./char-scan.ts";
import { fail } from "./errors.ts";
import { groupDigits } from "./digits.ts";

export const MAX_PATH_LENGTH = 1024;
/**
 * The most paths a lease pattern's `{a,b}` groups may expand to. The overlap check compares the
 * expansions of two patterns pairwise, so without a bound twelve `{a,b}` groups in each of two
 * patterns (16 million pairs) held a sync for minutes. 64 x 64 short globs is about 0.1 s; long
 * ones are bounded by MAX_EXPANDED_LENGTH and the budgets (match-budget.ts).
 */
export const MAX_PATTERN_ALTERNATIVES = 64;
/** So that counting a pattern's alternatives is itself cheap (300 nested groups took 0.3 s). */
const MAX_BRACE_GROUPS = 32;
export function isGlob(pattern: string): boolean {
  // Whether any of * ? [ ] { } is there, in one scan: a claim's overlap advisory asks this of
  // every live lease, where a regex test was ~0.03 ms of a claim at 1,000 leases.
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern.charCodeAt(i);
    if (c === 42 || c === 63 || c === 91 || c === 93 || c === 123 || c === 125) return true; // * ? [ ] { }
  }
  return false;
}

/**
 * A lease pattern as minimatch (and brace expansion) reads globs, where a backslash escapes the
 * next character: each backslash escaped, so that it stands for itself, as in a file name on POSIX.
 */
export function globSource(pattern: string): string {
  return pattern.includes("\\") ? pattern.replace(/\\/g, "\\\\") : pattern;
}

/**
 * The longest path segment (file or folder name) a pattern may hold, in each of its alternatives:
 * no common file system allows a longer name, and the overlap search's work grows with the product
 * of two segments' lengths (docs/performance.md, "Bounds on comparing lease patterns").
 */
export const MAX_SEGMENT_LENGTH = 255;
/**
 * The most characters a pattern's `{a,b}` alternatives may hold together. Compiling a pattern and
 * searching two for a common file grow with them: 64 alternatives of 1,000 characters took 0.25 s
 * to compile and one comparison of two such patterns 86 s; at 4,096 the compile is ~16,000 units
 * of match-budget.ts and the costliest comparison measured ~30 million, which the budgets cut short.
 */
export const MAX_EXPANDED_LENGTH = 4096;

/**
 * Why a lease pattern (or a task's scope glob) is too big to check against others, or null. Asked
 * of what a user types (normalizeRepoPath) and of every pattern received from another clone
 * (validate-receive.ts), so that compiling any stored pattern is cheap and comparing two is work
 * the budgets of match-budget.ts can cut short.
 */
export function patternProblem(pattern: string): string | null {
  if (pattern.length > MAX_PATH_LENGTH) return `is longer than ${MAX_PATH_LENGTH} characters`;
  if (!pattern.includes("{")) return segmentProblem(pattern);
  let groups = 0;
  for (let i = 0; i < pattern.length; i++) if (pattern.charCodeAt(i) === 123 && ++groups > MAX_BRACE_GROUPS) return `has more than ${MAX_BRACE_GROUPS} { groups`;
  let known = problems.get(pattern);
  if (known === undefined) {
    // Expanded only up to one past the bound: the count itself is never allowed to run long.
    const all = braceExpand(globSource(pattern), { braceExpandMax: MAX_PATTERN_ALTERNATIVES + 1 });
    let chars = 0;
    for (const x of all) chars += x.length;
    known =
      all.length > MAX_PATTERN_ALTERNATIVES
        ? `expands to more than ${MAX_PATTERN_ALTERNATIVES} paths ({a,b} groups); name fewer alternatives or use a wider glob`
        : chars > MAX_EXPANDED_LENGTH
          ? `expands to ${groupDigits(chars)} characters in all ({a,b} alternatives); at most ${groupDigits(MAX_EXPANDED_LENGTH)}: name fewer or shorter alternatives, or use a wider glob`
          : (all.map(segmentProblem).find((p) => p !== null) ?? null);
    if (problems.size >= 10_000) problems.clear();
    problems.set(pattern, known);
  }
  return known;
}

function segmentProblem(path: string): string | null {
  let start = 0;
  for (let i = 0; i <= path.length; i++) {
    if (i < path.length && path.charCodeAt(i) !== 47) continue;
    if (i - start > MAX_SEGMENT_LENGTH) return `has a path segment of ${i - start} characters; at most ${MAX_SEGMENT_LENGTH} (no file name is longer)`;
    start = i + 1;
  }
  return null;
}

const problems = new Map<string, string | null>();

/** Whether backslashes typed in a path are separators: on Windows only. */
const BACKSLASH_SEPARATES = process.platform === "win32";

function slashed(p: string, backslashSeparates: boolean): string {
  return backslashSeparates ? p.replace(/\\/g, "/") : p;
}

function shown(s: string): string {
  return JSON.stringify(s.length > 80 ? s.slice(0, 80) + "…" : s);
}

/**
 * Turns a path or glob a user or agent typed into repo-relative POSIX form. `cwd` is the folder it
 * was typed in and `root` the worktree root (both absolute); a relative input is read against
 * `cwd`. Anything that lands outside the repository is refused: that is never a lease we can keep.
 */
export function normalizeRepoPath(input: string, root: string, cwd: string = root, backslashSeparates = BACKSLASH_SEPARATES): string {
  if (typeof input !== "string" || input.length === 0) fail("invalid_input", "empty path");
  if (input.length > MAX_PATH_LENGTH) fail("invalid_input", `path ${shown(input)} is longer than ${MAX_PATH_LENGTH} characters`);
  if (hasControlChar(input)) fail("invalid_input", `path ${shown(input)} contains control characters`);
  if (hasExtglob(input)) fail("invalid_input", `pattern ${shown(input)} uses an extglob; use *, ?, **, [...] or {a,b}`);
  // Windows separators from agents running there; on POSIX `back\slash.txt` is one file's name.
  const typed = slashed(input, backslashSeparates);
  const rootP = toPosix(root, backslashSeparates);
  const abs = typed.startsWith("/") || startsWithDrive(typed) ? toPosix(typed, backslashSeparates) : posix.join(toPosix(cwd, backslashSeparates), typed);
  const normalized = posix.normalize(abs);
  const rel = relativeTo(rootP, normalized);
  if (rel === "" || rel === ".") fail("invalid_input", `path ${shown(input)} is the repository root itself; name files or a glob like '**'`);
  if (rel.startsWith("../") || rel === ".." || posix.isAbsolute(rel)) {
    fail("invalid_input", `path ${shown(input)} is outside the repository ${root}`, { path: input });
  }
  const trailingSlash = typed.endsWith("/");
  if (rel === ".git" || rel.startsWith(".git/")) fail("invalid_input", `path ${shown(input)} is inside .git`);
  const out = trailingSlash ? `${rel}/**` : rel;
  // What is stored is bounded, in the form stored: typed as an absolute path (as a lease's
  // symlinks are followed), `{a,b}` alternatives would each count the root's folders.
  const tooBig = patternProblem(out);
  if (tooBig) fail("invalid_input", `pattern ${shown(out)} ${tooBig}`);
  return out;
}

/**
 * `posix.relative(root, path)`. A path as posix.normalize leaves it, without a trailing slash, that
 * is the root, a slash and more, is that more (the root is then as normalize leaves it too, or the
 * path would not be): posix.relative's first run in a process was ~25 us of the pre-edit hook's
 * answer.
 */
export function relativeTo(root: string, path: string): string {
  const inside =
    root.length > 0 &&
    path.length > root.length + 1 &&
    path.charCodeAt(root.length) === 47 &&
    path.charCodeAt(path.length - 1) !== 47 &&
    path.startsWith(root) &&
    posix.normalize(path) === path;
  return inside ? path.slice(root.length + 1) : posix.relative(root, path);
}

function toPosix(p: string, backslashSeparates: boolean): string {
  const s = slashed(p, backslashSeparates);
  return startsWithDrive(s) ? "/" + s : s;
}

/** Ignore globs follow .gitignore habits: a pattern without a slash matches at any depth. */
export function anchorPattern(pattern: string): string {
  const p = slashed(pattern.trim(), BACKSLASH_SEPARATES);
  if (p.startsWith("/")) return p.slice(1);
  if (p.endsWith("/")) return `${p}**`;
  return p.includes("/") ? p : `**/${p}`;
}
