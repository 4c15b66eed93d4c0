// The one place that decides whether two lease patterns (paths or globs) can name a common file.
// Exact for *, ?, **, [...] and {a,b}: it searches for a witness path both patterns match, so an
// answer of "overlap" always comes with the file that proves it (and the tests check that file
// against minimatch), and "no overlap" means no such file exists.
import { braceExpand, Minimatch } from "minimatch";
import { spend, type MatchBudget } from "./match-budget.ts";
import { globSource, isGlob } from "./paths.ts";

/** minimatch options used everywhere a lease pattern meets a path: dotfiles are files too. */
export const MATCH_OPTS = { dot: true, nocomment: true, nonegate: true } as const;

/** Whether `path` (a repo-relative file) is matched by `pattern` (a path or glob); `work`: a local check's budget (match-budget.ts). */
export function matchesPath(pattern: string, path: string, work?: MatchBudget): boolean {
  if (!isGlob(pattern)) return pattern === path;
  // Most leases sit under a literal folder: skip the matcher when the path is not under it.
  const shape = globShape(pattern);
  if (!path.startsWith(shape.prefix)) return false;
  // The two shapes most leases and ignore globs have, answered without building a matcher.
  if (shape.kind === "folder") return path.length > shape.prefix.length;
  if (shape.kind === "name") return path.slice(shape.prefix.length) === shape.name || path.endsWith("/" + shape.name);
  spend(work, 0);
  let m = compiled.get(pattern);
  if (!m) {
    m = new Minimatch(globSource(pattern), MATCH_OPTS);
    keep(compiled, pattern, m);
    // Compiling is the cost: ~0.2 ms a pattern, and a few microseconds a character of each
    // alternative in a hook's fresh process (64 x 1,000 characters took 0.3-0.5 s); then a match
    // ~2 µs an alternative.
    spend(work, 200 + 4 * m.globSet.reduce((n, g) => n + g.length, 0));
  }
  spend(work, 2 * m.set.length);
  return m.match(path);
}

// Kept for the next check of the same patterns, up to a bound: every lease another clone pushes
// passes through here, and with no bound a run over many `[a-z]` globs filled a 4 GB heap.
const compiled = new Map<string, Minimatch>();
const prefixes = new Map<string, string>();
const shapes = new Map<string, GlobShape>();
/** The most patterns each cache keeps; past it the cache starts again (clear-on-full). */
export const CACHE_ENTRIES = 2_000;

function keep<T>(cache: Map<string, T>, key: string, value: T): void {
  if (cache.size >= CACHE_ENTRIES) cache.clear();
  cache.set(key, value);
}

/** How many patterns the caches hold (tests check they stay bounded). */
export function cachedPatterns(): number {
  return Math.max(compiled.size, prefixes.size, shapes.size, expanded.size);
}

/**
 * A glob's shape as matchesPath answers it: `<prefix>**` (anything under the prefix), `<prefix>**\/<name>`
 * with no glob character or slash in the name (a last segment named so, under the prefix), or any
 * other (the matcher's, once under the prefix). `prefix`: literalPrefix's.
 */
export type GlobShape = { kind: "folder"; prefix: string } | { kind: "name"; prefix: string; name: string } | { kind: "other"; prefix: string };

export function globShape(pattern: string): GlobShape {
  let s = shapes.get(pattern);
  if (s === undefined) {
    const prefix = literalPrefix(pattern);
    const rest = pattern.slice(prefix.length);
    const name = rest.slice(3);
    s = rest === "**" ? { kind: "folder", prefix } : rest.startsWith("**/") && !isGlob(name) && !name.includes("/") ? { kind: "name", prefix, name } : { kind: "other", prefix };
    keep(shapes, pattern, s);
  }
  return s;
}

/** The whole folders before the first magic segment, with a trailing slash (`src/api/`), or "". */
export function literalPrefix(pattern: string): string {
  let pre = prefixes.get(pattern);
  if (pre === undefined) {
    const segs = pattern.split("/");
    const firstMagic = segs.findIndex((s) => isGlob(s));
    pre = firstMagic <= 0 ? "" : segs.slice(0, firstMagic).join("/") + "/";
    keep(prefixes, pattern, pre);
  }
  return pre;
}

/**
 * A file both patterns match, or null when there is none. `work`: the budget of the check, grant or
 * receive that asks (match-budget.ts); it throws MATCH_BUDGET_SPENT past it, even within one
 * comparison (the search spends as it goes), so no pair of patterns can hold its caller long.
 */
export function overlapWitness(a: string, b: string, work?: MatchBudget): string | null {
  if (!isGlob(a) && !isGlob(b)) return a === b ? a : null;
  if (!isGlob(a)) return matchesPath(b, a, work) ? a : null;
  if (!isGlob(b)) return matchesPath(a, b, work) ? b : null;
  const pa = literalPrefix(a);
  const pb = literalPrefix(b);
  if (!pa.startsWith(pb) && !pb.startsWith(pa)) return null;
  spend(work, 0);
  const ea = expansions(a, work);
  const eb = expansions(b, work);
  // Plain paths among the alternatives are looked up, not searched: `{a,b}{a,b}.../x` is 2^N of them.
  for (const p of ea.paths) if (eb.paths.has(p)) return p;
  for (const [xs, ys] of [
    [ea.pathSegments, eb.globs],
    [ea.globs, eb.pathSegments],
    [ea.globs, eb.globs],
  ] as const) {
    for (const x of xs) {
      for (const y of ys) {
        const w = witnessPath(x, y, work);
        if (w !== null) return w;
      }
    }
  }
  return null;
}

/**
 * A pattern's `{a,b}` alternatives, parsed once: plain paths (no magic, no backslash, no empty, `.`
 * or `..` segment), which overlap only by being equal, and the rest.
 */
interface Expansions {
  paths: Set<string>;
  pathSegments: Segment[][];
  globs: Segment[][];
}

const expanded = new Map<string, Expansions>();

function expansions(pattern: string, work?: MatchBudget): Expansions {
  let e = expanded.get(pattern);
  if (e) return e;
  e = { paths: new Set(), pathSegments: [], globs: [] };
  // Expanded and tokenized in minimatch's reading, where each (doubled) backslash is itself.
  // Stored patterns are bounded (paths.ts patternProblem), so the expansion is small.
  let chars = 0;
  for (const x of new Set(braceExpand(globSource(pattern)))) {
    chars += x.length;
    if (isPlainPath(x)) {
      e.paths.add(x);
      e.pathSegments.push(parsePattern(x));
    } else e.globs.push(parsePattern(x));
  }
  keep(expanded, pattern, e);
  // Expanding and parsing cost about what compiling does (matchesPath): charged once done and kept.
  spend(work, 4 * chars);
  return e;
}

function isPlainPath(x: string): boolean {
  return !isGlob(x) && !x.includes("\\") && x.split("/").every((s) => s !== "" && s !== "." && s !== "..");
}

export function overlaps(a: string, b: string): boolean {
  return overlapWitness(a, b) !== null;
}

// --- patterns as segments of tokens -------------------------------------------------------------

type Token = { t: "lit"; c: string } | { t: "one" } | { t: "star" } | { t: "class"; negated: boolean; test: (c: string) => boolean; chars: string[] };
type Segment = { globstar: true } | { globstar: false; tokens: Token[] };

function parsePattern(p: string): Segment[] {
  const segs: Segment[] = [];
  for (const s of p.split("/")) {
    if (s.length === 0) continue;
    if (s === "**") {
      if (!segs.at(-1)?.globstar) segs.push({ globstar: true }); // `**/**` is `**`
    } else segs.push({ globstar: false, tokens: tokenize(s) });
  }
  // Like minimatch, a trailing `**` after something (`src/**`) needs at least one more segment:
  // `src/**` names what is inside src, not src itself.
  if (segs.length > 1 && segs.at(-1)!.globstar) segs.splice(segs.length - 1, 0, { globstar: false, tokens: [{ t: "star" }] });
  return segs;
}

function tokenize(seg: string): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i]!;
    if (c === "\\" && i + 1 < seg.length) out.push({ t: "lit", c: seg[++i]! });
    else if (c === "*") {
      if (out.at(-1)?.t !== "star") out.push({ t: "star" });
    } else if (c === "?") out.push({ t: "one" });
    else if (c === "[") {
      const cls = parseClass(seg, i);
      if (cls) {
        out.push(cls.token);
        i = cls.end;
      } else out.push({ t: "lit", c });
    } else out.push({ t: "lit", c });
  }
  return out;
}

/** `[abc]`, `[a-z]`, `[!x]` / `[^x]`; returns null for an unterminated class (then `[` is literal). */
function parseClass(seg: string, start: number): { token: Token; end: number } | null {
  let i = start + 1;
  let negated = false;
  if (seg[i] === "!" || seg[i] === "^") {
    negated = true;
    i++;
  }
  const ranges: [string, string][] = [];
  let first = true;
  for (; i < seg.length; i++) {
    const c = seg[i]!;
    if (c === "]" && !first) {
      const inSet = (ch: string) => ranges.some(([lo, hi]) => ch >= lo && ch <= hi);
      const chars = ranges.flatMap(([lo, hi]) => [lo, hi, shift(lo, -1), shift(hi, 1)]);
      return { token: { t: "class", negated, test: (ch) => inSet(ch) !== negated, chars }, end: i };
    }
    first = false;
    let lo = c;
    if (c === "\\" && i + 1 < seg.length) lo = seg[++i]!;
    if (seg[i + 1] === "-" && seg[i + 2] !== undefined && seg[i + 2] !== "]") {
      ranges.push([lo, seg[i + 2]!]);
      i += 2;
    } else ranges.push([lo, lo]);
  }
  return null;
}

function shift(c: string, d: number): string {
  return String.fromCharCode(Math.max(33, Math.min(126, c.charCodeAt(0) + d)));
}

// --- the search ---------------------------------------------------------------------------------

/** A character no pattern mentions: it stands for "any other character". */
const FRESH = "\u00e6";

/**
 * Segment lists are matched like minimatch: `**` takes zero or more whole segments; other segments
 * take exactly one. Memoised over (i, j) positions, so the work is quadratic in segment counts.
 */
function witnessPath(a: Segment[], b: Segment[], work?: MatchBudget): string | null {
  // State: positions in a and b, and whether a segment was taken yet (a path has at least one).
  const memo = new Map<number, string[] | null>();
  const W = b.length + 1;
  const go = (i: number, j: number, took: number): string[] | null => {
    const key = (i * W + j) * 2 + took;
    if (memo.has(key)) return memo.get(key)!;
    memo.set(key, null);
    spend(work, 1);
    let found: string[] | null = null;
    const sa = a[i];
    const sb = b[j];
    if (!sa && !sb) found = took ? [] : null;
    else if (sa?.globstar) {
      found = go(i + 1, j, took);
      if (!found && sb) {
        if (sb.globstar) found = go(i, j + 1, took) ?? prepend(segmentWitness([{ t: "star" }], [{ t: "star" }], work)!, go(i, j, 1));
        else {
          const seg = segmentWitness(sb.tokens, [{ t: "star" }], work);
          if (seg !== null) found = prepend(seg, go(i, j + 1, 1));
        }
      }
    } else if (sb?.globstar) {
      found = go(i, j + 1, took);
      if (!found && sa) {
        const seg = segmentWitness(sa.tokens, [{ t: "star" }], work);
        if (seg !== null) found = prepend(seg, go(i + 1, j, 1));
      }
    } else if (sa && sb) {
      const seg = segmentWitness(sa.tokens, sb.tokens, work);
      if (seg !== null) found = prepend(seg, go(i + 1, j + 1, 1));
    }
    memo.set(key, found);
    return found;
  };
  const segs = go(0, 0, 0);
  return segs && segs.length ? segs.join("/") : null;
}

function prepend(seg: string, rest: string[] | null): string[] | null {
  return rest ? [seg, ...rest] : null;
}

/**
 * A non-empty segment both token lists match (never `.` or `..`, which no glob names), found by a
 * breadth-first search over pairs of positions. The alphabet is every character the patterns
 * mention, range edges and their neighbours, plus one fresh character for "anything else".
 */
function segmentWitness(x: Token[], y: Token[], work?: MatchBudget): string | null {
  const alphabet = new Set<string>([FRESH, "x", "-", "_"]);
  for (const tok of [...x, ...y]) {
    if (tok.t === "lit") alphabet.add(tok.c);
    if (tok.t === "class") for (const c of tok.chars) alphabet.add(c);
  }
  alphabet.delete("/");
  // kind: 0 empty so far, 1 ".", 2 "..", 3 anything else (the only accepted kind).
  const start = closure(x, 0).flatMap((i) => closure(y, 0).map((j) => [i, j, 0] as const));
  const seen = new Set<string>();
  const queue: { i: number; j: number; kind: number; text: string }[] = [];
  for (const [i, j, kind] of start) {
    seen.add(`${i},${j},${kind}`);
    queue.push({ i, j, kind, text: "" });
  }
  while (queue.length) {
    const s = queue.shift()!;
    if (s.i === x.length && s.j === y.length && s.kind === 3) return s.text;
    spend(work, alphabet.size);
    for (const c of alphabet) {
      const nx = step(x, s.i, c);
      if (!nx.length) continue;
      const ny = step(y, s.j, c);
      if (!ny.length) continue;
      const kind = s.kind < 2 && c === "." ? s.kind + 1 : 3;
      for (const i of nx) {
        for (const j of ny) {
          const key = `${i},${j},${kind}`;
          if (seen.has(key)) continue;
          seen.add(key);
          queue.push({ i, j, kind, text: s.text + c });
        }
      }
    }
  }
  return null;
}

/** Positions reachable without consuming a character (a star may match nothing). */
function closure(toks: Token[], i: number): number[] {
  const out = [i];
  while (toks[i]?.t === "star") out.push(++i);
  return out;
}

/** Positions after consuming `c` at position `i`, closed under empty stars. */
function step(toks: Token[], i: number, c: string): number[] {
  const tok = toks[i];
  if (!tok) return [];
  switch (tok.t) {
    case "lit":
      return tok.c === c ? closure(toks, i + 1) : [];
    case "one":
      return closure(toks, i + 1);
    case "class":
      return tok.test(c) ? closure(toks, i + 1) : [];
    case "star":
      return [i, ...closure(toks, i + 1)];
  }
}
