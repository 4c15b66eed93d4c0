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
import { cleanEnv, cleanupTemp, gitOut, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

/** A small seeded generator, so a failure names a run that can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

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

test.run();
