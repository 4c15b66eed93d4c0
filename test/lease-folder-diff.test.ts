// A long-running reader takes a new lease tip's files from the folder it read before by a diff of
// the folder trees' bytes (lease-folder-diff.ts): on random trees the diff is exactly the files
// added, changed and gone; a new tree that is not plain files in git's order where it differs is
// left to a whole read (null); and through a real store, a folder spread over new bucket counts
// reads the same as a fresh read while a forged tip (a folder in two bucket counts, leases in the
// wrong bucket, a name no writer makes, a subfolder) is refused as a whole read refuses it.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { diffFolder, folderBytes, type FolderBytes } from "../src/store/lease-folder-diff.ts";
import { lease, unlease } from "../src/store/lease-actions.ts";
import { leaseIndexOf } from "../src/store/lease-index.ts";
import { LEASES_REF, loadLeases } from "../src/store/lease-store.ts";
import { bucketOf, readByDiff, readLeaseTree } from "../src/store/lease-tree.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { commit, eventMessage, setRef, tree } from "./support/forge.ts";
import { cleanEnv, cleanupTemp, gitOut, tempRepo } from "./support/repo.ts";
import { lcg32 as rng } from "./support/rng.ts";

test.after(cleanupTemp);

const entry = (name: string, oid: string, mode = "100644") => Buffer.concat([Buffer.from(`${mode} ${name}\0`, "latin1"), Buffer.from(oid, "hex")]);
const folderOf = (files: Map<string, string>): FolderBytes => {
  const names = [...files.keys()].sort();
  const parts = names.map((n) => entry(n, files.get(n)!));
  return folderBytes(Buffer.concat(parts), names, parts.map((p) => p.length));
};
const oid = (next: () => number) => Array.from({ length: 20 }, () => Math.floor(next() * 256).toString(16).padStart(2, "0")).join("");

test("the diff of two folders is the files added, changed and gone, and the new folder's entries", () => {
  const seed = Number(process.env.FOLDER_DIFF_SEED ?? Date.now() % 100_000);
  const next = rng(seed);
  for (let round = 0; round < 300; round++) {
    const old = new Map<string, string>();
    // Names that share long prefixes and differ in length, as folder and bucket names do.
    const name = () => `p${Math.floor(next() * 60)}${next() < 0.3 ? `~4~${Math.floor(next() * 4)}` : ""}.json`;
    const size = Math.floor(next() * 40);
    for (let i = 0; i < size; i++) old.set(name(), oid(next));
    const now = new Map(old);
    const edits = Math.floor(next() * 8);
    for (let i = 0; i < edits; i++) {
      const r = next();
      const keys = [...now.keys()];
      if (r < 0.35 && keys.length) now.delete(keys[Math.floor(next() * keys.length)]!);
      else if (r < 0.7 && keys.length) now.set(keys[Math.floor(next() * keys.length)]!, oid(next));
      else now.set(name(), oid(next));
    }
    const expected: string[] = [];
    for (const n of old.keys()) if (!now.has(n)) expected.push(`${n} -`);
    for (const [n, o] of now) if (old.get(n) !== o) expected.push(`${n} ${o}`);
    expected.sort();
    const after = folderOf(now);
    const max = 1 + Math.floor(next() * 10);
    const diff = diffFolder(folderOf(old), after.data, 20, max);
    if (expected.length > max) {
      assert.is(diff, null, `seed ${seed}, round ${round}: ${expected.length} changes past ${max}`);
      continue;
    }
    assert.ok(diff, `seed ${seed}, round ${round}: no diff`);
    assert.equal(diff!.changes.map((c) => `${c.name} ${c.oid ?? "-"}`).sort(), expected, `seed ${seed}, round ${round}: changes`);
    assert.equal(diff!.next.names, after.names, `seed ${seed}, round ${round}: names`);
    assert.equal([...diff!.next.starts], [...after.starts], `seed ${seed}, round ${round}: entry starts`);
  }
});

test("a new folder that is not plain files in git's order where it differs is left to a whole read", () => {
  const next = rng(7);
  const files = new Map(Array.from({ length: 30 }, (_, i) => [`f${String(i).padStart(2, "0")}.json`, oid(next)] as [string, string]));
  const old = folderOf(files);
  const names = old.names;
  const parts = names.map((n) => entry(n, files.get(n)!));
  const odd: [string, Buffer][] = [
    ["two entries swapped", Buffer.concat([...parts.slice(0, 10), parts[11]!, parts[10]!, ...parts.slice(12)])],
    ["a name twice", Buffer.concat([...parts.slice(0, 10), entry(names[10]!, oid(next)), ...parts.slice(10)])],
    ["a subfolder", Buffer.concat([...parts.slice(0, 10), entry("f10a", oid(next), "40000"), ...parts.slice(10)])],
    ["a name that is not ASCII", Buffer.concat([...parts.slice(0, 10), Buffer.concat([Buffer.from("100644 f10\u00e9.json\0", "utf8"), Buffer.alloc(20, 1)]), ...parts.slice(10)])],
    ["a cut last entry", Buffer.concat(parts).subarray(0, Buffer.concat(parts).length - 5)],
    ["bytes after the last entry", Buffer.concat([...parts, Buffer.from("junk")])],
    ["an entry out of place at the end", Buffer.concat([...parts, entry("a.json", oid(next))])],
  ];
  for (const [why, data] of odd) assert.is(diffFolder(old, data, 20, 16), null, why);
  // The same folder again: no change, every entry kept.
  const same = diffFolder(old, Buffer.concat(parts), 20, 16);
  assert.equal(same?.changes, []);
  assert.equal(same?.next.names, names);
});

async function errorOf(p: Promise<unknown>): Promise<{ code?: string; message: string } | null> {
  try {
    await p;
    return null;
  } catch (e) {
    return e as { code?: string; message: string };
  }
}

const event = { type: "leased", task: "", agent: "writer", at: new Date().toISOString(), scope: "primary", worktree: null, branch: null, paths: ["src/x.ts"] };

test("a running reader takes a folder re-spread over other buckets from a diff, and refuses forged tips as a whole read does", async () => {
  const repo = tempRepo();
  const writer = await openSyncedStore({ cwd: repo, agent: "writer", warm: true, env: cleanEnv() });
  const reader = await openSyncedStore({ cwd: repo, agent: "reader", warm: true, env: cleanEnv() });
  try {
    await lease(writer, Array.from({ length: 100 }, (_, i) => `src/m${i}/f.ts`), { cwd: repo });
    await lease(writer, Array.from({ length: 30 }, (_, i) => `pkg${i}/f.ts`), { cwd: repo });
    await loadLeases(reader);
    const spread = gitOut(repo, "ls-tree", "--name-only", "refs/handoff/leases:leases").split("\n").filter((n) => n.startsWith("src"));
    assert.ok(spread.length === 4 && spread.every((n) => /^src~4~\d\.json$/.test(n)), spread.join(" "));
    // 80 of src/'s 100 leases go: its 20 left are one file again (4 files gone, 1 come).
    await unlease(writer, Array.from({ length: 80 }, (_, i) => `src/m${i}/f.ts`), { cwd: repo });
    const { set, tip } = await loadLeases(reader);
    const kept = leaseIndexOf(reader).get(tip!)!.groups!;
    assert.ok(readByDiff(kept), "read from a diff");
    const fresh = await readLeaseTree(reader.reader, reader.oidBytes, tip!, LEASES_REF, null);
    assert.equal(set.leases, fresh.set.leases);
    assert.equal([...kept.keys()].sort(), [...fresh.groups.keys()].sort());
    assert.ok(kept.has("src.json"));

    // Forged tips on top of the one the reader holds, each refused with the whole read's reason.
    const good = tip!;
    const folder = gitOut(repo, "rev-parse", `${good}:leases`);
    const entries: Record<string, string> = {};
    for (const n of gitOut(repo, "ls-tree", "--name-only", folder).split("\n").filter(Boolean)) entries[n] = gitOut(repo, "cat-file", "-p", `${folder}:${n}`) + "\n";
    const pkgs = Object.keys(entries).filter((n) => n.startsWith("pkg"));
    // Those of src/'s leases that a two-file spread puts in its first file: filed right, in a second count.
    const srcLeases = (JSON.parse(entries["src.json"]!) as { leases: { pattern: string }[] }).leases;
    const firstOfTwo = JSON.stringify({ leases: srcLeases.filter((l) => bucketOf(l.pattern, 2) === 0) }) + "\n";
    const forged: [string, Record<string, string | { tree: string }>, RegExp][] = [
      ["src in one file and in two", { ...entries, "src~2~0.json": firstOfTwo }, /spread over 1 and 2|spread over 2 and 1/],
      ["src's leases in the wrong bucket", { ...entries, "src~2~0.json": entries["src.json"]! }, /filed under|spread over/],
      ["two files' leases swapped", { ...entries, [pkgs[0]!]: entries[pkgs[1]!]!, [pkgs[1]!]: entries[pkgs[0]!]! }, /filed under/],
      ["a name no writer makes", { ...entries, "notes.txt": entries[pkgs[0]!]! }, /not a lease file's name/],
      ["a subfolder", { ...entries, pkg5a: { tree: tree(repo, { "x.json": entries[pkgs[0]!]! }) } }, /not a plain file/],
    ];
    for (const [why, files, reason] of forged) {
      const bad = commit(repo, { tree: tree(repo, { format: "git-handoff 3\n", leases: { tree: tree(repo, files) } }), parent: good, author: "writer", message: eventMessage(event) });
      setRef(repo, LEASES_REF, bad);
      // The reader's last read is the good tip: this read diffs against it.
      assert.is(leaseIndexOf(reader).latest()?.set, set, why);
      const err = await errorOf(loadLeases(reader));
      assert.ok(err, `${why}: read without complaint`);
      assert.is(err!.code, "corrupt_state", `${why}: ${err!.message}`);
      assert.match(err!.message, reason, `${why}: ${err!.message}`);
      const whole = await errorOf(readLeaseTree(reader.reader, reader.oidBytes, bad, LEASES_REF, null));
      assert.match(whole?.message ?? "", reason, `${why}: the whole read says ${whole?.message}`);
    }
  } finally {
    writer.close();
    reader.close();
  }
});

test.run();
