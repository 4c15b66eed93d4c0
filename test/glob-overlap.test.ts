// Property tests for the one overlap function: random globs and paths over a small alphabet,
// checked against minimatch itself (a witness must match both; a shared match must be found).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { minimatch } from "minimatch";
import { matchesPath, overlapWitness, overlaps } from "../src/core/glob-overlap.ts";
import { normalizeRepoPath, anchorPattern } from "../src/core/paths.ts";
import { HandoffError } from "../src/core/errors.ts";
import { xorshift32 as rng } from "./support/rng.ts";

const OPTS = { dot: true, nocomment: true, nonegate: true };

const NAMES = ["a", "b", "ab", ".x", "a.ts", "b.ts"];
const SEG_GLOBS = ["*", "a*", "*b", "*.ts", "?", "a?", "[ab]", "[!a]", "{a,b}", "**", ".*"];

function pick<T>(r: () => number, xs: T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

function randomPath(r: () => number): string {
  const n = 1 + Math.floor(r() * 3);
  return Array.from({ length: n }, () => pick(r, NAMES)).join("/");
}

function randomGlob(r: () => number): string {
  const n = 1 + Math.floor(r() * 3);
  return Array.from({ length: n }, () => (r() < 0.5 ? pick(r, SEG_GLOBS) : pick(r, NAMES))).join("/");
}

/** Every path of up to 3 segments over the names: the finite universe for "do they share a file". */
const UNIVERSE: string[] = (() => {
  const out: string[] = [];
  const grow = (prefix: string[], depth: number) => {
    if (prefix.length) out.push(prefix.join("/"));
    if (depth === 0) return;
    for (const n of NAMES) grow([...prefix, n], depth - 1);
  };
  grow([], 3);
  return out;
})();

test("a path against a glob agrees with minimatch", () => {
  const r = rng(7);
  for (let k = 0; k < 3000; k++) {
    const p = randomPath(r);
    const g = randomGlob(r);
    assert.is(matchesPath(g, p), minimatch(p, g, OPTS), `matchesPath(${g}, ${p})`);
    assert.is(overlaps(g, p), minimatch(p, g, OPTS), `overlaps(${g}, ${p})`);
  }
});

test("random glob pairs: a witness matches both, and any shared file is found (symmetric)", () => {
  const seed = Number(process.env.OVERLAP_SEED ?? 20261129);
  const r = rng(seed);
  let overlapping = 0;
  for (let k = 0; k < 1500; k++) {
    const a = randomGlob(r);
    const b = randomGlob(r);
    const w = overlapWitness(a, b);
    if (w !== null) {
      overlapping++;
      assert.ok(minimatch(w, a, OPTS), `witness ${w} must match ${a} (seed ${seed})`);
      assert.ok(minimatch(w, b, OPTS), `witness ${w} must match ${b} (seed ${seed})`);
    } else {
      const shared = UNIVERSE.find((p) => minimatch(p, a, OPTS) && minimatch(p, b, OPTS));
      assert.is(shared, undefined, `${a} and ${b} both match ${shared} but overlap said no (seed ${seed})`);
    }
    assert.is(overlaps(b, a), w !== null, `symmetry for ${a} / ${b}`);
  }
  assert.ok(overlapping > 100 && overlapping < 1400, `the generator should produce both outcomes (${overlapping})`);
});

test("the cases from the issue", () => {
  assert.ok(overlaps("src/api/**", "src/api/users.ts"));
  assert.ok(overlaps("src/api/**", "src/*/users.ts"));
  assert.ok(overlaps("src/*/users.ts", "src/api/users.ts"));
  assert.not.ok(overlaps("src/api/**", "src/web/**"));
  assert.not.ok(overlaps("src/api/**", "src/api"), "a folder glob names what is inside, like minimatch");
  assert.ok(overlaps("**/*.ts", "src/{a,b}/x.ts"));
  assert.not.ok(overlaps("*.md", "src/*.md"));
  assert.ok(overlaps("src/[a-c]*.ts", "src/b?.ts"));
  assert.not.ok(overlaps("src/[!b]*.ts", "src/b*.ts"));
});

test("paths are normalised to repo-relative POSIX form; outside the repo is invalid input", () => {
  const root = "/repo";
  assert.is(normalizeRepoPath("src/a.ts", root), "src/a.ts");
  assert.is(normalizeRepoPath("./src//a.ts", root), "src/a.ts");
  assert.is(normalizeRepoPath("/repo/src/a.ts", root), "src/a.ts");
  assert.is(normalizeRepoPath("a.ts", root, "/repo/src"), "src/a.ts");
  assert.is(normalizeRepoPath("src\\win\\a.ts", root, root, true), "src/win/a.ts", "Windows separators, on Windows");
  assert.is(normalizeRepoPath("src\\win\\a.ts", root, root, false), "src\\win\\a.ts", "a file name elsewhere");
  assert.is(normalizeRepoPath("src/api/", root), "src/api/**");
  assert.is(normalizeRepoPath("src/x/../a.ts", root), "src/a.ts");
  for (const bad of ["../x", "src/../../x", "/etc/passwd", "/repository/x", "", ".", ".git/config", "a\u0000b", "x".repeat(2000), "+(a|b)"]) {
    try {
      normalizeRepoPath(bad, root);
      assert.unreachable(`accepted ${JSON.stringify(bad)}`);
    } catch (e) {
      assert.ok(e instanceof HandoffError, String(e));
      assert.is((e as HandoffError).code, "invalid_input");
    }
  }
});

test("ignore globs follow .gitignore habits", () => {
  assert.is(anchorPattern("yarn.lock"), "**/yarn.lock");
  assert.is(anchorPattern("/dist/**"), "dist/**");
  assert.is(anchorPattern("gen/"), "gen/**");
  assert.is(anchorPattern("src/gen/*.ts"), "src/gen/*.ts");
});

test.run();
