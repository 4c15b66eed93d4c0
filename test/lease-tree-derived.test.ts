// A long-running reader of a lease tree that another process keeps writing derives each new tip's
// set from the one it read before (lease-tree.ts derivedLeases): the files that changed taken out
// and put in, the rest kept as the very objects. After every write of a random run, that set must
// be the one a reader with nothing before reads (same leases, same order), its groups those of a
// fresh walk, and a write that changes many files at once must be read right too.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { leaseGroups } from "../src/core/lease-groups.ts";
import { isInLeaseOrder, orderedParent } from "../src/core/lease-order.ts";
import { lease, unlease } from "../src/store/lease-actions.ts";
import { LEASES_REF, loadLeases } from "../src/store/lease-store.ts";
import { readByDiff, readLeaseTree } from "../src/store/lease-tree.ts";
import { leaseIndexOf } from "../src/store/lease-index.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { spawnSync } from "node:child_process";
import { cleanEnv, cleanupTemp, gitOut, tempRepo } from "./support/repo.ts";
import { lcg32 as rng } from "./support/rng.ts";

test.after(cleanupTemp);

const FOLDERS = Array.from({ length: 90 }, (_, i) => `pkg${i}`);

test("a reader's set derived from its last read is the set a fresh read gives, write after write", async () => {
  const seed = Number(process.env.LEASE_DERIVED_SEED ?? Date.now() % 100_000);
  const next = rng(seed);
  const repo = tempRepo();
  const writer = await openSyncedStore({ cwd: repo, agent: "writer", warm: true, env: cleanEnv() });
  const reader = await openSyncedStore({ cwd: repo, agent: "reader", warm: true, env: cleanEnv() });
  try {
    // Past the size where the set becomes a tree; src/ holds enough leases to be spread over buckets.
    await lease(writer, FOLDERS.slice(0, 70).map((f) => `${f}/x.ts`), { cwd: repo });
    await lease(writer, Array.from({ length: 80 }, (_, i) => `src/m${i}/f.ts`), { cwd: repo });
    let before = (await loadLeases(reader)).set.leases;
    let derived = 0;
    let diffed = 0;
    for (let step = 0; step < 30; step++) {
      const many = step % 10 === 9;
      const picks = Array.from({ length: many ? 24 : 1 + Math.floor(next() * 3) }, () => (next() < 0.3 ? `src/m${Math.floor(next() * 120)}/f.ts` : `${FOLDERS[Math.floor(next() * FOLDERS.length)]}/x.ts`));
      if (next() < 0.4) await unlease(writer, picks, { cwd: repo }).catch(() => undefined);
      else await lease(writer, picks, { cwd: repo });
      const { set, tip } = await loadLeases(reader);
      // Derived (not sorted afresh): linked to the set before, until something groups it.
      if (!many && orderedParent(set.leases) !== undefined) derived++;
      const fresh = await readLeaseTree(reader.reader, reader.oidBytes, tip!, LEASES_REF, null);
      assert.equal(set.leases, fresh.set.leases, `seed ${seed}, step ${step}: the derived set differs from a fresh read`);
      // What the writer stored is the set it holds (its files split from the split before).
      const held = (await loadLeases(writer)).set.leases;
      const ids = (ls: readonly { pattern: string; agent: string }[]) => ls.map((l) => `${l.pattern} ${l.agent}`);
      assert.equal(ids(fresh.set.leases), ids(held), `seed ${seed}, step ${step}: the tree holds another set than its writer's`);
      // Its files (names and blobs) are the tree's, whether read whole or from a diff of the folder's bytes.
      const kept = leaseIndexOf(reader).get(tip!)!.groups!;
      const files = (g: ReadonlyMap<string, { oid: string }>) => [...g].map(([name, x]) => `${name} ${x.oid}`).sort();
      assert.equal(files(kept), files(fresh.groups), `seed ${seed}, step ${step}: the files differ from a fresh read's`);
      if (readByDiff(kept)) diffed++;
      assert.ok(isInLeaseOrder(set.leases), `seed ${seed}, step ${step}: known to be in order`);
      const groups = (l: readonly { pattern: string }[]) => [...leaseGroups(l as never)].map(([k, ls]) => [k, ls.map((x) => x.pattern)]).sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
      assert.equal(groups(set.leases), groups(fresh.set.leases), `seed ${seed}, step ${step}: groups`);
      // Leases of the files that did not change are the objects read before.
      if (!many) assert.ok(set.leases.filter((l) => before.includes(l)).length * 2 >= set.leases.length, `seed ${seed}, step ${step}: leases kept`);
      before = set.leases;
      if (step % 5 === 4) {
        // The reader writes over the tip it read: its folder takes its order from the names read.
        await lease(reader, [`${FOLDERS[step]}/r${step}.ts`], { cwd: repo });
        const folder = gitOut(repo, "rev-parse", "refs/handoff/leases:leases");
        const listed = gitOut(repo, "ls-tree", folder);
        const made = spawnSync("git", ["mktree"], { cwd: repo, input: `${listed}\n`, encoding: "utf8", env: cleanEnv() });
        assert.is(made.stdout.trim(), folder, `seed ${seed}, step ${step}: the reader's folder is not in git's order`);
        before = (await loadLeases(reader)).set.leases;
      }
    }
    const fsck = spawnSync("git", ["fsck", "--strict", "--no-dangling"], { cwd: repo, encoding: "utf8", env: cleanEnv() });
    assert.is(fsck.status, 0, `seed ${seed}: ${fsck.stdout}${fsck.stderr}`);
    assert.ok(derived >= 20, `seed ${seed}: only ${derived} of 27 reads derived from the read before`);
    assert.ok(diffed >= 20, `seed ${seed}: only ${diffed} of 30 reads took the changed files from a diff of the folder's bytes`);
  } finally {
    writer.close();
    reader.close();
  }
});

test.run();
