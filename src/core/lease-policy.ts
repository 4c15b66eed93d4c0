// What is never leased or checked, and how the mode turns raw verdicts into answers. Formatter
// output and generated files must not cause false blocks, or agents learn to ignore the tool.
import type { Config, LeaseMode } from "./config.ts";
import { globShape, matchesPath } from "./glob-overlap.ts";
import { newMatchBudget, withinBudget, type MatchBudget } from "./match-budget.ts";
import { clipped } from "./named-few.ts";
import { anchorPattern, isGlob, patternProblem } from "./paths.ts";

export const DEFAULT_IGNORE = [
  "package-lock.json",
  "npm-shrinkwrap.json",
  "yarn.lock",
  "pnpm-lock.yaml",
  "bun.lockb",
  "bun.lock",
  "Cargo.lock",
  "Gemfile.lock",
  "poetry.lock",
  "uv.lock",
  "Pipfile.lock",
  "composer.lock",
  "go.sum",
  "flake.lock",
  "/dist/**",
  "/build/**",
];

export type Verdict = "deny" | "warn" | "info" | "ok";
const RANK: Record<Verdict, number> = { ok: 0, info: 1, warn: 2, deny: 3 };

export function worst(a: Verdict, b: Verdict): Verdict {
  return RANK[a] >= RANK[b] ? a : b;
}

export interface LeasePolicy {
  mode: LeaseMode;
  /** Anchored globs (see anchorPattern). */
  ignore: readonly string[];
}

/**
 * Patterns marked `linguist-generated` or `handoff-ignore` (set, `=true`, or any value but
 * `false`) in a .gitattributes text. Unset (`-attr`) and `=false` lines are skipped.
 */
export function gitattributesIgnores(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const [pattern, ...attrs] = line.split(/\s+/);
    if (!pattern || pattern.startsWith("[attr]")) continue;
    const marked = attrs.some((a) => {
      const [name, value] = a.split("=");
      return (name === "linguist-generated" || name === "handoff-ignore") && value !== "false";
    });
    if (marked) out.push(pattern);
  }
  return out;
}

/**
 * What is said of the ignore globs `source` (a file name) gives that are past a lease pattern's
 * bounds: buildPolicy leaves them out, and a glob dropped unsaid would have its files checked and
 * leased while whoever wrote it believes them ignored. One wording for .handoff.yaml and .gitattributes.
 */
export function leftOutIgnores(source: string, globs: string[]): string[] {
  return globs.flatMap((g) => {
    const problem = patternProblem(anchorPattern(g));
    return problem ? [`${source}: ignore glob ${JSON.stringify(clipped(g))} left out: it ${problem}`] : [];
  });
}

/**
 * The policy; an ignore glob past the bounds a lease pattern has (paths.ts patternProblem) is left
 * out: .handoff.yaml may hold 1,000 globs of 1,024 characters, whose `{a,b}` groups took a quarter
 * second each to compile, or threw in minimatch (a path it would have ignored is checked as usual).
 */
export function buildPolicy(config: Pick<Config, "mode" | "ignore">, gitattributes: string | null): LeasePolicy {
  const more = [...config.ignore, ...(gitattributes ? gitattributesIgnores(gitattributes) : [])];
  if (!more.length) return { mode: config.mode, ignore: defaultAnchored() };
  const raw = [...DEFAULT_IGNORE, ...more];
  return { mode: config.mode, ignore: [...new Set(raw.map(anchorPattern))].filter((g) => patternProblem(g) === null) };
}

/**
 * DEFAULT_IGNORE as buildPolicy makes it (anchored, each within a lease pattern's bounds), and its
 * shapes (shapesOf), made from what the defaults are (file names, and root folders written
 * `/dist/**`) without the general path: most repositories add no ignore glob of their own, and
 * that path ran anchorPattern, patternProblem and globShape over the sixteen globs, a character at
 * a time, in code run once a process (~0.2 ms of a pre-edit hook's answer with the first
 * isIgnored). test/lease-core.test.ts checks both against what the general path makes.
 */
export function defaultAnchored(): readonly string[] {
  return (anchoredDefaults ??= Object.freeze(DEFAULT_IGNORE.map((g) => (g.startsWith("/") ? g.slice(1) : `**/${g}`))));
}

/** defaultAnchored's list, made at its first call (not as the bundle loads: its young generation is counted). */
let anchoredDefaults: readonly string[] | null = null;

/** shapesOf(defaultAnchored()), made at its first use. */
function defaultShapes(): IgnoreShapes {
  return {
    exact: new Set(),
    // The defaults are names and root folders (`/dist/**`) only.
    names: new Set(DEFAULT_IGNORE.filter((g) => !g.startsWith("/"))),
    folders: DEFAULT_IGNORE.filter((g) => g.startsWith("/")).map((g) => g.slice(1, -2)),
    others: [],
  };
}

/**
 * Whether the policy ignores `path`, within `work` (match-budget.ts; a check passes its own): past
 * it the path is not ignored, so it is checked or leased as any other, never skipped unlooked-at.
 */
export function isIgnored(policy: LeasePolicy, path: string, work: MatchBudget = newMatchBudget()): boolean {
  const s = shapesOf(policy.ignore);
  if (s.exact.has(path) || s.names.has(path.slice(path.lastIndexOf("/") + 1))) return true;
  for (const f of s.folders) if (path.length > f.length && path.startsWith(f)) return true;
  return s.others.length > 0 && withinBudget(() => s.others.some((g) => matchesPath(g, path, work))) === true;
}

/**
 * A policy's ignore globs by the shapes matchesPath (glob-overlap.ts) answers without a matcher,
 * sorted once per list: a path is then looked up, where asking each glob in turn took ~60 us a
 * path in a one-shot process (the sixteen defaults; `status` judges every agent's changed paths).
 * Those shapes spend no budget, so a path one of them names is ignored even when the costly
 * globs among the others would have spent it first.
 */
export interface IgnoreShapes {
  /** Plain paths: the path itself. */
  exact: Set<string>;
  /** `**\/<name>` with no glob character or slash in the name: the path's last segment. */
  names: Set<string>;
  /** `<folder>/**`: anything under the folder. */
  folders: string[];
  /** Every other glob, in the policy's order: matchesPath. */
  others: string[];
}

const shapes = new WeakMap<readonly string[], IgnoreShapes>();

export function shapesOf(ignore: readonly string[]): IgnoreShapes {
  let s = shapes.get(ignore);
  if (s) return s;
  if (ignore === anchoredDefaults) {
    shapes.set(ignore, (s = defaultShapes()));
    return s;
  }
  s = { exact: new Set(), names: new Set(), folders: [], others: [] };
  for (const g of ignore) {
    if (!isGlob(g)) {
      s.exact.add(g);
      continue;
    }
    const shape = globShape(g);
    if (shape.kind === "folder") s.folders.push(shape.prefix);
    else if (shape.kind === "name" && shape.prefix === "") s.names.add(shape.name);
    else s.others.push(g);
  }
  // Keyed by the list itself: a policy's list is made by buildPolicy and never changed after.
  shapes.set(ignore, s);
  return s;
}

/** advisory never blocks (deny -> warn); strict blocks on warn too (warn -> deny). */
export function applyMode(mode: LeaseMode, v: Verdict): Verdict {
  if (mode === "advisory" && v === "deny") return "warn";
  if (mode === "strict" && v === "warn") return "deny";
  return v;
}
