// The fast hook's cache decides which leases a path is under with two tests per pattern (fast-cache.ts):
// a superset test every match must pass, and, for the forms it decides exactly, an exact one. Random
// patterns (`..`, `.` and empty segments too, as another clone may push: minimatch reads `x/..` as
// nothing) and paths (as the hooks check them: no such segment) against the matcher the full hook
// uses (the fast path's property tests: hooks-fast-property-edits and -commits).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { exactTest, supersetTest } from "../src/hooks/fast-cache.ts";
import { matchesPath } from "../src/core/glob-overlap.ts";
import { PATTERNS, SEED } from "./support/fast-property.ts";
import { mulberry32 as rng } from "./support/rng.ts";

test("the cache's pattern tests: every match passes the superset test, the exact forms decide exactly", () => {
  const r = rng(SEED + 2);
  const pieces = ["src", "api", "lib", "deep", "a", "b.md", "x.gen.ts", "users.ts", "*", "**", "*.ts", "?.md", "[ab].ts", "{a,b}", "{src,lib}", "x*", "*x", "a?b", "!a", "+(a)", "@(x)", "(b)", "gen", "..", ".", "", "{.,x}."];
  const pattern = () => Array.from({ length: 1 + r.int(4) }, () => r.pick(pieces)).join("/");
  let checked = 0;
  for (let i = 0; i < 400; i++) {
    const p = r.chance(0.7) ? pattern() : r.pick(PATTERNS);
    const [kind, a, b] = supersetTest(p);
    const exact = exactTest(p);
    for (let j = 0; j < 25; j++) {
      const path = Array.from({ length: 1 + r.int(4) }, () => r.pick(["src", "api", "lib", "deep", "a", "b", "b.md", "a.ts", "x.gen.ts", "users.ts", "x", "ax", "xa", "aab", "gen", "(b)", "!a"])).join("/");
      const hit = matchesPath(p, path);
      const passes = kind === "U" || (kind === "E" ? a === path : path.startsWith(a) && path.endsWith(b));
      if (hit) assert.ok(passes, `${path} matches ${p} but fails its superset test ${kind} ${a} ${b}`);
      if (exact) {
        const [k, ea, eb] = exact;
        const sure = k === "E" ? ea === path : k === "D" ? path.startsWith(ea) && path.length > ea.length : path.startsWith(ea) && (path.slice(ea.length) === eb || path.endsWith(`/${eb}`));
        assert.is(sure, hit, `exact test ${k} ${ea} ${eb} of ${p} on ${path}`);
      }
      checked++;
    }
  }
  process.stdout.write(`  ${checked} path and pattern pairs\n`);
});

test.run();
