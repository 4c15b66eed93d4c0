// What is never leased or checked, and how the mode turns raw verdicts into answers. Formatter
// output and generated files must not cause false blocks, or agents learn to ignore the tool.
import type { Config, LeaseMode } from "./config.ts";
import { matchesPath } from "./glob-overlap.ts";
import { anchorPattern } from "./paths.ts";

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
  ignore: string[];
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

export function buildPolicy(config: Pick<Config, "mode" | "ignore">, gitattributes: string | null): LeasePolicy {
  const raw = [...DEFAULT_IGNORE, ...config.ignore, ...(gitattributes ? gitattributesIgnores(gitattributes) : [])];
  return { mode: config.mode, ignore: [...new Set(raw.map(anchorPattern))] };
}

export function isIgnored(policy: LeasePolicy, path: string): boolean {
  return policy.ignore.some((g) => matchesPath(g, path));
}

/** advisory never blocks (deny -> warn); strict blocks on warn too (warn -> deny). */
export function applyMode(mode: LeaseMode, v: Verdict): Verdict {
  if (mode === "advisory" && v === "deny") return "warn";
  if (mode === "strict" && v === "warn") return "deny";
  return v;
}
