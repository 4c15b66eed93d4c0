// Cache coherence, differentially: a seeded random walk over a real repository (one-shot writes by
// several agents, a long-running `git handoff mcp` server, a second clone syncing through a bare
// remote, and what a user does to the repository behind our back: pack-refs, gc, repack, a task ref
// deleted or moved back, a new policy on main, cache files deleted, the clock moving on). Every
// write is made again in a copy of the repository whose caches under .git/handoff/ are gone, at the
// same path, and must leave the same refs and answer the same; after each step a random choice of
// reads (and the mcp server's listings) must answer what the cache-free copy answers.
//
//   HANDOFF_FUZZ_SEED=N (or N,M,...)   the seeds (default: a fixed few)
//   HANDOFF_FUZZ_STEPS=N               steps per seed (default 6)
//   HANDOFF_FUZZ_READS=N               random reads per step besides `task list --json` (default 1)
//   HANDOFF_FUZZ_MCP=0                 no mcp server
//   HANDOFF_FUZZ_BULK=N                N tasks added before the walk (500 and more: the listing files)
//   HANDOFF_FUZZ_KEEP=1                keep the repositories of a failed walk (A, T, R.git, Rt.git, B)
//   HANDOFF_FUZZ_TICK=MS               how far the clock moves each step (default 1000; 0: all at once)
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTemp } from "./support/repo.ts";
import { World, packersIn } from "./support/coherence-world.ts";
import { plantedCacheIsCaught, quietSyncIsCompared, walk } from "./support/coherence.ts";

test.after(() => {
  if (process.env.HANDOFF_FUZZ_KEEP !== "1") cleanupTemp();
});

/** The steps numbered as the walk counts them (a step's reads follow it, unnumbered). */
function logLines(log: string[]): string[] {
  const out: string[] = [];
  let n = -1;
  for (const l of log) {
    if (l.startsWith("   then")) out.push(`  ${l}`);
    else out.push(`  ${n < 0 ? "setup" : n}: ${l}`), n++;
  }
  return out;
}

const seeds = (process.env.HANDOFF_FUZZ_SEED ?? "11,20").split(",").map((s) => Number(s.trim()));
const steps = Number(process.env.HANDOFF_FUZZ_STEPS ?? 6);
const reads = Number(process.env.HANDOFF_FUZZ_READS ?? 1);
const mcp = process.env.HANDOFF_FUZZ_MCP !== "0";
const tick = Number(process.env.HANDOFF_FUZZ_TICK ?? 1000);
const bulk = Number(process.env.HANDOFF_FUZZ_BULK ?? 0);

test("a cache line planted with another status is reported (the comparison normalises nothing it should see)", async () => {
  const found = await plantedCacheIsCaught();
  assert.is(found.length, 1, JSON.stringify(found));
  assert.match(found[0]!.what, /task list --json/);
  assert.match(found[0]!.a, /"status": "done"/);
  assert.match(found[0]!.t, /"status": "todo"/);
});

test("a sync that goes by the last quiet sync's record answers as the truth's whole sync, but for its unchanged mark", async () => {
  const r = await quietSyncIsCompared();
  assert.ok(r.quiet, "the first sync left its quiet record for the second to go by");
  assert.equal(r.findings, []);
});

test("the truth is copied only once the remote's background pack-refs is done", async () => {
  const w = new World(0, false, true);
  try {
    // git waits for a held packed-refs.lock (core.packedRefsTimeout, 1 s): a packer at work meanwhile.
    writeFileSync(join(w.R, "packed-refs.lock"), "");
    const child = spawn("git", ["pack-refs", "--all"], { cwd: w.R, stdio: "ignore" });
    const exited = new Promise((r) => child.on("exit", r));
    for (const until = Date.now() + 10_000; !packersIn(w.root).includes(child.pid!); ) {
      assert.ok(Date.now() < until, "the packer is seen at work");
      await new Promise((r) => setTimeout(r, 5));
    }
    w.freshTruth();
    assert.equal(packersIn(w.root), [], "the copy waited for the packer");
    rmSync(join(w.R, "packed-refs.lock"));
    await exited;
  } finally {
    await w.close();
  }
});

for (const seed of seeds) {
  test(`seed ${seed}: ${steps} steps answer as a copy without caches does`, async () => {
    assert.ok(Number.isInteger(seed), `HANDOFF_FUZZ_SEED must be integers: ${process.env.HANDOFF_FUZZ_SEED}`);
    const verbose = process.env.HANDOFF_FUZZ_VERBOSE === "1";
    const r = await walk(seed, { steps, reads, mcp, tick, bulk, ...(verbose ? { onStep: (i, l) => process.stderr.write(`[${seed}] ${i}: ${l}\n`) } : {}) });
    if (r.findings.length) {
      const f = r.findings[0]!;
      const report = [
        `HANDOFF_FUZZ_SEED=${seed} HANDOFF_FUZZ_STEPS=${steps} HANDOFF_FUZZ_READS=${reads} HANDOFF_FUZZ_TICK=${tick} HANDOFF_FUZZ_BULK=${bulk} HANDOFF_FUZZ_MCP=${mcp ? 1 : 0}: step ${f.step}: ${f.what}`,
        `(repositories in ${r.root}; HANDOFF_FUZZ_KEEP=1 keeps them)`,
        "steps:",
        ...logLines(r.log),
        "--- with caches (A):",
        f.a,
        "--- without caches (truth):",
        f.t,
      ].join("\n");
      assert.unreachable(report);
    }
    assert.ok(r.calls > steps, `the walk made ${r.calls} calls`);
  });
}

test.run();
