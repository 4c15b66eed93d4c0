// The `leases/` folder of a lease tree is written in git's order whatever the writes before it:
// a writer merges the prefix files it adds into the order of the tree before (lease-tree.ts
// encodeFolder) instead of sorting every name again, so after each of a random run of leases and
// releases over folder names whose escaped forms sort unlike their plain ones, the folder must be
// the tree `git mktree` makes of the same entries, and `git fsck --strict` finds nothing.
import { spawnSync } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { lease, unlease } from "../src/store/lease-actions.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { CLI, cleanEnv, cleanupTemp, gitOut, tempRepo } from "./support/repo.ts";
import { lcg32 as rng } from "./support/rng.ts";
import { leaseCacheFile } from "../src/store/lease-cache-file.ts";

test.after(cleanupTemp);

/** A small seeded generator, so a failure names a run that can be replayed. */

const FOLDERS = ["a", "a-b", "a.b", "a_b", "A", "Z", "z9", "0", "9z", "a+b", "a@b", "é", "éa", "b", "a~", ...Array.from({ length: 70 }, (_, i) => `pkg${i}`)];

test("after every write of a random run, the leases/ folder is in git's order", async () => {
  const seed = Number(process.env.LEASE_ORDER_SEED ?? Date.now() % 100_000);
  const next = rng(seed);
  const repo = tempRepo();
  const store = await openSyncedStore({ cwd: repo, agent: "writer", warm: true, env: cleanEnv() });
  const held = new Set<string>();
  try {
    // Past the size where the set becomes a tree.
    await lease(store, FOLDERS.slice(15).map((f) => `${f}/x.ts`), { cwd: repo });
    for (const f of FOLDERS.slice(15)) held.add(f);
    for (let step = 0; step < 40; step++) {
      const pick = FOLDERS[Math.floor(next() * FOLDERS.length)]!;
      if (held.has(pick) && next() < 0.5) {
        await unlease(store, [`${pick}/x.ts`], { cwd: repo });
        held.delete(pick);
      } else {
        const more = [pick, FOLDERS[Math.floor(next() * FOLDERS.length)]!];
        await lease(store, more.map((f) => `${f}/x.ts`), { cwd: repo });
        for (const f of more) held.add(f);
      }
      const folder = gitOut(repo, "rev-parse", "refs/handoff/leases:leases");
      const listed = gitOut(repo, "ls-tree", folder);
      const made = spawnSync("git", ["mktree"], { cwd: repo, input: `${listed}\n`, encoding: "utf8", env: cleanEnv() });
      assert.is(made.stdout.trim(), folder, `seed ${seed}, step ${step}: the folder is not in git's order:\n${listed}`);
      assert.is(listed.split("\n").length, held.size, `seed ${seed}, step ${step}: one file per folder held`);
    }
  } finally {
    store.close();
  }
  const fsck = spawnSync("git", ["fsck", "--strict", "--no-dangling"], { cwd: repo, encoding: "utf8", env: cleanEnv() });
  assert.is(fsck.status, 0, `seed ${seed}: ${fsck.stdout}${fsck.stderr}`);
});

// One-shot writers take a tree's prefix files from the stored tree and the set in the lease
// cache, and keep the blobs of the files they do not change (lease-tree.ts groupsAt): write after
// write, what a reader without the cache reads must be what was leased.
test("one-shot writes over a lease tree read back the same without the cache, write after write", () => {
  const seed = Number(process.env.LEASE_ORDER_SEED ?? Date.now() % 100_000);
  const next = rng(seed);
  const repo = tempRepo();
  const held = new Map<string, string>(); // pattern -> agent
  const run = (agent: string, args: string[]) => {
    const r = spawnSync(process.execPath, [CLI, ...args], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: agent }), encoding: "utf8" });
    assert.is(r.status, 0, `seed ${seed}: ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  run("alice", ["lease", ...FOLDERS.slice(15).map((f) => `${f}/x.ts`)]);
  for (const f of FOLDERS.slice(15)) held.set(`${f}/x.ts`, "alice");
  for (let step = 0; step < 12; step++) {
    const agent = next() < 0.5 ? "alice" : "bob";
    const mine = [...held].filter(([, a]) => a === agent).map(([p]) => p);
    if (mine.length && next() < 0.4) {
      const p = mine[Math.floor(next() * mine.length)]!;
      run(agent, ["unlease", p]);
      held.delete(p);
    } else {
      const free = FOLDERS.map((f) => `${f}/y.ts`).filter((p) => !held.has(p));
      const p = free[Math.floor(next() * free.length)]!;
      run(agent, ["lease", p]);
      held.set(p, agent);
    }
    // Read without the cache the writer left, which the next writer then uses as it was.
    const cache = leaseCacheFile(`${repo}/.git`);
    const kept = readFileSync(cache, "utf8");
    rmSync(cache);
    const read = JSON.parse(run("carol", ["leases", "--json"])) as { pattern: string; agent: string }[];
    writeFileSync(cache, kept);
    assert.equal(read.map((l) => `${l.pattern} ${l.agent}`).sort(), [...held].map(([p, a]) => `${p} ${a}`).sort(), `seed ${seed}, step ${step}`);
  }
  const fsck = spawnSync("git", ["fsck", "--strict", "--no-dangling"], { cwd: repo, encoding: "utf8", env: cleanEnv() });
  assert.is(fsck.status, 0, `seed ${seed}: ${fsck.stdout}${fsck.stderr}`);
});

test.run();
