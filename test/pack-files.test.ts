// Objects read from the repository's own packs in process (src/git/pack-files.ts): every object of
// packs git wrote (whole entries, deltas on an offset and deltas on a name, incompressible ones) reads back as what its
// id names; a pack written after the first listing is found; what is not ours to read (an .idx of
// version 1, a damaged entry) is no answer, and the reader then asks git. A one-shot command whose
// agent record is packed (after `git gc`) starts no `git cat-file`.
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LocalPacks } from "../src/git/pack-files.ts";
import { ObjectReader } from "../src/git/object-reader.ts";
import { cleanEnv, cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

/** A history whose files change a little each commit: packed, most objects are deltas. */
function history(commits: number): string {
  const repo = tempRepo();
  let text = Array.from({ length: 200 }, (_, i) => `line ${i} of a file that changes a little at every commit`).join("\n");
  for (let c = 0; c < commits; c++) {
    text = text.replace(`line ${c * 3}`, `line ${c * 3} (changed at ${c})`);
    writeFileSync(join(repo, "a.txt"), text);
    writeFileSync(join(repo, "b.txt"), text.split("\n").reverse().join("\n"));
    // Incompressible (stored by zlib larger than it is): the entry's read must reach its end.
    if (c % 10 === 0) writeFileSync(join(repo, `random-${c}.bin`), randomBytes(100_000 + c));
    gitOut(repo, "add", ".");
    gitOut(repo, "commit", "-q", "-m", `commit ${c}`);
  }
  return repo;
}

const idOf = (o: { type: string; data: Buffer }) => createHash("sha1").update(`${o.type} ${o.data.length}\0`).update(o.data).digest("hex");
const allObjects = (repo: string) => gitOut(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split("\n");
/** How many entries of the pack are deltas of each kind (git verify-pack -v: a delta names its base). */
function deltas(repo: string): number {
  const [idx] = readdirSync(join(repo, ".git/objects/pack")).filter((f) => f.endsWith(".idx"));
  const out = gitOut(repo, "verify-pack", "-v", join(repo, ".git/objects/pack", idx!));
  return out.split("\n").filter((l) => /^[0-9a-f]{40} (blob|tree|commit|tag)\s+\d+ \d+ \d+ \d+ [0-9a-f]{40}$/.test(l)).length;
}

test("every object of a pack git wrote reads back as what its id names: whole, deltas on an offset, deltas on a name", () => {
  for (const offsets of [true, false]) {
    const repo = history(30);
    gitOut(repo, "-c", `repack.useDeltaBaseOffset=${offsets}`, "repack", "-adq", "--depth=50", "--window=50");
    assert.equal(readdirSync(join(repo, ".git/objects")).filter((d) => /^[0-9a-f]{2}$/.test(d)), [], "nothing loose");
    assert.ok(deltas(repo) > 20, `the pack holds deltas (${deltas(repo)})`);
    const packs = new LocalPacks(join(repo, ".git/objects"));
    const oids = allObjects(repo);
    assert.ok(oids.length > 90);
    for (const oid of oids) {
      const o = packs.read(oid);
      assert.ok(o, `${oid} read from the pack`);
      assert.is(idOf(o!), oid);
    }
    assert.is(packs.read("0".repeat(40)), undefined, "an object no pack holds");
    // Each entry inflated once: the bases of a chain are kept, not resolved from its root again.
    assert.ok(packs.stats.inflated <= oids.length, `${packs.stats.inflated} entries inflated for ${oids.length} objects`);
    packs.close();
  }
});

test("deltas read in any order, with bases kept or evicted, are what git reads; a chain is not resolved from its root for each object", () => {
  const repo = history(40);
  gitOut(repo, "repack", "-adq", "--depth=50", "--window=50");
  const oids = allObjects(repo);
  const shuffled = [...oids].sort((a, b) => (a.slice(7) < b.slice(7) ? -1 : 1));
  // 2,000 bytes keeps a few commits and trees (an object over an eighth of it is not kept): eviction at
  // most steps; 300 keeps nothing (the text files are ~12 KB each): every chain resolved from its root.
  for (const budget of [16 * 1024 * 1024, 2000, 300]) {
    const packs = new LocalPacks(join(repo, ".git/objects"), budget);
    for (const order of [oids, [...oids].reverse(), shuffled]) {
      for (const oid of order) {
        assert.is(idOf(packs.read(oid)!), oid, `${oid} with a budget of ${budget}`);
        assert.ok(packs.keptBytes() <= budget, `${packs.keptBytes()} bytes kept against a budget of ${budget}`);
      }
    }
    if (budget > 1024 * 1024) assert.ok(packs.stats.inflated <= oids.length, `kept: ${packs.stats.inflated} inflated for ${oids.length} objects, read three times`);
    else assert.ok(packs.stats.inflated > 3 * oids.length, `evicted: chains resolved again (${packs.stats.inflated} for ${oids.length} objects, three times)`);
    packs.close();
  }
});

test("a pack written after the first listing is found; an .idx of version 1 and a damaged entry are no answer, and the reader asks git", async () => {
  const repo = history(5);
  gitOut(repo, "repack", "-adq");
  const packs = new LocalPacks(join(repo, ".git/objects"));
  assert.ok(packs.read(gitOut(repo, "rev-parse", "HEAD")), "listed on first need");
  // A new commit, packed on its own (an incremental repack): found once the folder is listed again.
  writeFileSync(join(repo, "c.txt"), "new\n");
  gitOut(repo, "add", ".");
  gitOut(repo, "commit", "-q", "-m", "later");
  gitOut(repo, "repack", "-dq");
  const later = gitOut(repo, "rev-parse", "HEAD");
  assert.is(idOf(packs.read(later)!), later);
  packs.close();

  // The same pack indexed in version 1: not read here; ObjectReader falls back to cat-file.
  const dir = join(repo, ".git/objects/pack");
  for (const idx of readdirSync(dir).filter((f) => f.endsWith(".idx"))) {
    const pack = join(dir, idx.replace(/\.idx$/, ".pack"));
    rmSync(join(dir, idx));
    const r = spawnSync("git", ["index-pack", "--index-version=1", "-o", join(dir, idx), pack], { cwd: repo, env: cleanEnv() });
    assert.is(r.status, 0, String(r.stderr));
  }
  const v1 = new LocalPacks(join(repo, ".git/objects"));
  assert.is(v1.read(later), undefined, "an .idx of version 1 is git's to read");
  v1.close();
  const reader = new ObjectReader(join(repo, ".git"), repo);
  assert.is(idOf((await reader.read(later))!), later, "read through git");
  reader.close();

  // A damaged entry (its compressed bytes overwritten): no answer, never a wrong object.
  gitOut(repo, "repack", "-adfq");
  const [pack] = readdirSync(dir).filter((f) => f.endsWith(".pack"));
  const bytes = readFileSync(join(dir, pack!));
  for (let i = 200; i < bytes.length - 40; i += 97) bytes[i] = bytes[i]! ^ 0x5a;
  writeFileSync(join(dir, pack!), bytes);
  const damaged = new LocalPacks(join(repo, ".git/objects"));
  let answered = 0;
  for (const oid of allObjects(repo).filter(Boolean)) {
    const o = damaged.read(oid);
    if (o) {
      answered++;
      assert.is(idOf(o), oid, "an answer is always the object its id names");
    }
  }
  assert.ok(answered < allObjects(repo).length, "the damaged entries gave no answer");
  damaged.close();

  // A damaged .idx (its fan-out past its count, its offsets pointing anywhere): no answer, no throw.
  const [idx] = readdirSync(dir).filter((f) => f.endsWith(".idx"));
  const index = readFileSync(join(dir, idx!));
  const count = index.readUInt32BE(8 + 255 * 4);
  for (let b = 100; b < 256; b++) index.writeUInt32BE(count + 1000, 8 + b * 4);
  const offsets = 8 + 1024 + count * 24;
  for (let k = 0; k < Math.min(count, 20); k++) index.writeUInt32BE(((k * 7919) % 1000) + 12, offsets + k * 4);
  writeFileSync(join(dir, idx!), index);
  const odd = new LocalPacks(join(repo, ".git/objects"));
  for (const oid of allObjects(repo).filter(Boolean)) {
    const o = odd.read(oid);
    if (o) assert.is(idOf(o), oid, "an answer is always the object its id names");
  }
  odd.close();
});

test("a one-shot command whose agent record is packed starts no git cat-file", () => {
  const repo = tempRepo();
  const run = (args: string[], env: NodeJS.ProcessEnv = {}) => {
    const r = cli(args, { cwd: repo, agent: "alice", env });
    assert.is(r.code, 0, r.stderr);
    return r;
  };
  run(["session", "start", "--objective", "work"]);
  run(["task", "add", "one", "--id", "t1"]);
  run(["claim", "t1"]);
  gitOut(repo, "gc", "-q");
  assert.equal(readdirSync(join(repo, ".git/objects")).filter((d) => /^[0-9a-f]{2}$/.test(d)), [], "every object packed");
  const trace = join(tempDir("handoff-trace-"), "trace");
  const shown = run(["task", "show", "t1", "--json"], { GIT_TRACE: trace });
  assert.is(shown.json.claim.agent, "alice");
  const listed = run(["agents", "--json"], { GIT_TRACE: trace });
  assert.ok(JSON.stringify(listed.json).includes("alice"));
  let text = "";
  try {
    text = readFileSync(trace, "utf8");
  } catch {
    /* no git process at all */
  }
  assert.not.match(text, /cat-file/, "no cat-file started");
});

test.run();
