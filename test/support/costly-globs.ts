// Legal lease patterns costly to match (docs/performance.md, fortieth session): each within a lease
// pattern's bounds (64 alternatives, 4,096 characters in all), and so many of them spend a budget
// of matching (src/core/match-budget.ts). A glob compiled once is cached in its process and cheap
// after: a test that runs them in process takes its own `i`s.

const alternatives6 = "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}";

/** A legal glob costly to match against a path (64 alternatives, 4,096 characters in all): the `i`th. */
export function costly(i: number): string {
  let p = `**/${alternatives6}${i}*`;
  while (p.length - 24 + 2 + "/**/*.ts".length <= 4096 / 64) p += "*s";
  return p + "/**/*.ts";
}

/** A legal glob costly to compare with another like it, and overlapping none of them: the `i`th. */
export function costlyApart(i: number): string {
  let p = `**/${alternatives6}${i}`;
  while (p.length - 24 + 2 + 9 <= 64) p += "*s";
  return p + "s".repeat(8) + "x";
}

/** `n` costly globs from the `from`th on. */
export function costlyGlobs(from: number, n: number): string[] {
  return Array.from({ length: n }, (_, i) => costly(from + i));
}
