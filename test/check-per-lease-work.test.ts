// What a cold `check` does for each lease it looks at. isGlob (core/paths.ts) loops over a
// pattern's characters; asked twice of every lease, V8 marked it for optimisation in a cold check
// past ~40 leases and compiled it on another thread (~1.5-2 ms of CPU in a ~35 ms process). A
// check of a file now asks it a fixed number of times past its first 16 leases (which check.ts's
// GLOB_CHAR asks with the loop, char-scan.ts loopFirst), whatever the lease set holds: counted here
// with V8's own call counts (NODE_V8_COVERAGE), as test/bundle-lazy-group.test.ts counts its
// functions.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cliCoverage } from "./support/cli-coverage.ts";
import { cleanupTemp, cli, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

/** A repository where agent `other` leases `src/f0.ts` .. `src/f<n-1>.ts`. */
function leasedRepo(n: number): string {
  const repo = tempRepo();
  const r = cli(["lease", ...Array.from({ length: n }, (_, i) => `src/f${i}.ts`)], { cwd: repo, agent: "other" });
  assert.is(r.code, 0, r.stderr);
  return repo;
}

/** `check src/f0.ts` as agent `me` with V8's coverage on: its output and how often each named function of hot-main.cjs ran. */
function checkCalls(repo: string, names: string[]): { stdout: string; calls: Record<string, number> } {
  const r = cliCoverage(repo, ["check", "src/f0.ts"], "me");
  assert.is(r.status, 0, r.stderr);
  return { stdout: r.stdout, calls: Object.fromEntries(names.map((name) => [name, r.calls(name)])) };
}

test("a check of a file asks isGlob as often among 80 leases as among 20", () => {
  const few = checkCalls(leasedRepo(20), ["isGlob", "checkPath"]);
  const many = checkCalls(leasedRepo(80), ["isGlob", "checkPath"]);
  // The answer found the lease on the file itself in both.
  for (const r of [few, many]) {
    assert.match(r.stdout, /^warn {2}src\/f0\.ts is leased by other /);
    assert.is(r.calls.checkPath, 1);
  }
  assert.ok(few.calls.isGlob! > 0, "isGlob is counted");
  assert.is(many.calls.isGlob, few.calls.isGlob, `isGlob: ${few.calls.isGlob} calls among 20 leases, ${many.calls.isGlob} among 80`);
});

test.run();
