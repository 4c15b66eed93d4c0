// Refs read from the files in-process agree with git's own reading: a prefix's refs from a sorted
// packed-refs (found by binary search) with loose files laid over them, single reads, names that
// only share a prefix, and a packed-refs file whose lines are out of order (hand-edited).
import { spawnSync } from "node:child_process";
import { readFileSync, renameSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { RefFiles } from "../src/git/ref-files.ts";
import { cleanEnv, cleanupTemp, gitOut, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

/** git's own listing of every ref, cut to the names that start with `prefix` (RefFiles' sense). */
function gitList(repo: string, prefix: string): { name: string; oid: string }[] {
  const out = gitOut(repo, "for-each-ref", "--format=%(objectname) %(refname)");
  return out
    .split("\n")
    .map((l) => ({ oid: l.slice(0, 40), name: l.slice(41) }))
    .filter((r) => r.name.startsWith(prefix));
}

function setup(): { repo: string; commits: string[] } {
  const repo = tempRepo();
  const tree = gitOut(repo, "rev-parse", "HEAD^{tree}");
  const commits = Array.from({ length: 4 }, (_, i) => gitOut(repo, "commit-tree", tree, "-m", `c${i}`));
  let input = "";
  for (let i = 0; i < 60; i++) input += `create refs/handoff/tasks/t-${String(i).padStart(3, "0")} ${commits[i % 4]}\n`;
  input += `create refs/handoff/tasksx ${commits[0]}\ncreate refs/handoff/task ${commits[1]}\ncreate refs/handoff/leases ${commits[2]}\n`;
  const r = spawnSync("git", ["update-ref", "--stdin"], { cwd: repo, input, env: cleanEnv() });
  assert.is(r.status, 0, String(r.stderr));
  return { repo, commits };
}

test("a prefix's refs and single reads match git's, packed and loose", () => {
  const { repo, commits } = setup();
  gitOut(repo, "pack-refs", "--all");
  // Loose over packed: one moved after the pack, one new in the middle, one new at the end.
  gitOut(repo, "update-ref", "refs/handoff/tasks/t-010", commits[3]!);
  gitOut(repo, "update-ref", "refs/handoff/tasks/t-010a", commits[2]!);
  gitOut(repo, "update-ref", "refs/handoff/tasks/zz", commits[1]!);
  const files = new RefFiles(join(repo, ".git"));
  // Folder prefixes (and a single ref by its name), as every caller passes them.
  for (const prefix of ["refs/handoff/tasks/", "refs/handoff/leases", "refs/handoff/none/", "refs/heads/"]) {
    const got = files.list(prefix).map((t) => `${t.name} ${t.oid}`);
    const want = gitList(repo, prefix).map((t) => `${t.name} ${t.oid}`);
    assert.equal(got.filter((x) => !want.includes(x)).concat(want.filter((x) => !got.includes(x)).map((x) => `missing ${x}`)), [], prefix);
    assert.equal(got, want, prefix);
  }
  for (const { name, oid } of gitList(repo, "refs/")) assert.is(files.read(name), oid, name);
  assert.is(files.read("refs/handoff/tasks/t-999"), null);
  assert.is(files.readPacked("refs/handoff/tasks/t-010"), commits[10 % 4]!);
  assert.ok(files.packedClash("refs/handoff/tasks/t-001/inner"));
  assert.ok(!files.packedClash("refs/handoff/tasks/t-0001"));
});

test("a prefix's packed run is its lines as the file holds them, and null for a file out of order", () => {
  const { repo } = setup();
  const none = new RefFiles(join(repo, ".git")).listParts("refs/handoff/tasks/");
  assert.is(none.packedRun(), "", "no packed-refs: no lines");
  gitOut(repo, "pack-refs", "--all");
  const text = readFileSync(join(repo, ".git", "packed-refs"), "latin1");
  for (const prefix of ["refs/handoff/tasks/", "refs/handoff/leases", "refs/handoff/none/", "refs/heads/", "refs/handoff/task"]) {
    const want = text.split("\n").filter((l) => l.slice(41).startsWith(prefix)).map((l) => `${l}\n`).join("");
    assert.is(new RefFiles(join(repo, ".git")).listParts(prefix).packedRun(), want, prefix);
  }
  // `tasks/` ends before `tasksx` (its successor's search), not at the file's end.
  assert.not.ok(new RefFiles(join(repo, ".git")).listParts("refs/handoff/tasks/").packedRun()!.includes("tasksx"));
  const lines = text.split("\n");
  // Without "sorted" in the header (as a hand-edited file): no run; the caller lists the refs.
  writeFileSync(join(repo, ".git", "packed-refs"), [lines[0]!.replace(" sorted", ""), ...lines.slice(1, -1).reverse(), ""].join("\n"));
  assert.is(new RefFiles(join(repo, ".git")).listParts("refs/handoff/tasks/").packedRun(), null);
});

test("a packed-refs file out of order is still read right, and listed in order", () => {
  const { repo } = setup();
  gitOut(repo, "pack-refs", "--all");
  const path = join(repo, ".git", "packed-refs");
  const [header, ...lines] = readFileSync(path, "utf8").trimEnd().split("\n");
  const shuffled = lines.map((l, i) => [((i * 7919) % 101) / 101, l] as const).sort((a, b) => a[0] - b[0]).map(([, l]) => l);
  // Without "sorted" in the header, git sorts such a file itself on reading.
  writeFileSync(path, [header!.replace(" sorted", ""), ...shuffled].join("\n") + "\n");
  assert.is.not(shuffled.join("\n"), lines.join("\n"));
  const files = new RefFiles(join(repo, ".git"));
  const expected = gitList(repo, "refs/handoff/tasks/");
  assert.is(expected.length, 60);
  assert.equal(files.list("refs/handoff/tasks/"), expected);
  for (const { name, oid } of gitList(repo, "refs/")) assert.is(files.read(name), oid, name);
});

test("packed names beyond ASCII and annotated tags' peeled lines read as git reads them", () => {
  const { repo, commits } = setup();
  for (const name of ["ünïcode", "zeta", "éa/b", "a"]) gitOut(repo, "branch", name, commits[1]!);
  // Annotated tags among plain ones: a peeled line (`^<oid>`) under every other tag's line, so a
  // bisection lands on them often.
  for (let i = 0; i < 30; i++) gitOut(repo, "tag", ...(i % 2 ? ["-a", "-m", `tag ${i}`] : []), `v${i}`, commits[i % 4]!);
  gitOut(repo, "pack-refs", "--all");
  assert.match(readFileSync(join(repo, ".git", "packed-refs"), "utf8"), /\n\^[0-9a-f]{40}\n/, "a peeled line");
  const files = new RefFiles(join(repo, ".git"));
  for (const prefix of ["refs/heads/", "refs/tags/", "refs/tags/v1", "refs/handoff/tasks/", "refs/handoff/tasks/t-05", "refs/"]) assert.equal(files.list(prefix), gitList(repo, prefix), prefix);
  for (const { name, oid } of gitList(repo, "refs/")) assert.is(files.read(name), oid, name);
  assert.is(files.read("refs/tags/v1"), gitOut(repo, "rev-parse", "refs/tags/v1"), "the tag object, not the commit it peels to");
  assert.is(files.read("refs/heads/ünïcod"), null);
  for (const missing of ["refs/a", "refs/tags/v1x", "refs/zzz", "", "refs/tags/v9/x"]) assert.is(files.read(missing), null, missing);
  assert.ok(files.packedClash("refs/tags/v9/x"), "inside a packed ref");
  assert.ok(files.packedClash("refs/tags"), "a folder of packed refs");
  assert.ok(!files.packedClash("refs/tags/v99"));
});

// A repack in the same clock tick as the last read, with a ref's value changed: the file's time
// and size are the same, only its inode (git renames a new file over it) tells them apart.
test("packed-refs replaced within the same time and size is read again", () => {
  const { repo, commits } = setup();
  gitOut(repo, "pack-refs", "--all", "--prune");
  const path = join(repo, ".git", "packed-refs");
  const tick = new Date(Math.floor(Date.now() / 1000) * 1000); // a time utimes keeps exactly
  utimesSync(path, tick, tick);
  const refs = new RefFiles(join(repo, ".git"));
  const name = "refs/handoff/tasks/t-000";
  assert.is(refs.read(name), commits[0]);
  const was = statSync(path);
  const text = readFileSync(path, "utf8").replace(`${commits[0]} ${name}\n`, `${commits[1]} ${name}\n`);
  writeFileSync(`${path}.new`, text);
  renameSync(`${path}.new`, path);
  utimesSync(path, tick, tick);
  const now = statSync(path);
  assert.equal([now.size, now.mtimeMs], [was.size, was.mtimeMs], "same time, same size");
  assert.is(refs.read(name), commits[1]);
});

test("readers of one repository share a packed-refs read, and each sees it replaced", () => {
  const { repo, commits } = setup();
  gitOut(repo, "pack-refs", "--all", "--prune");
  const path = join(repo, ".git", "packed-refs");
  const name = "refs/handoff/tasks/t-001";
  const tick = new Date(Math.floor(Date.now() / 1000) * 1000); // a time utimes keeps exactly
  utimesSync(path, tick, tick);
  const a = new RefFiles(join(repo, ".git"));
  const b = new RefFiles(join(repo, ".git"));
  assert.is(a.read(name), commits[1]);
  // The second reader takes the first one's read: the file rewritten in place (git never does
  // that) with its inode, size and time kept is not read again.
  const was = statSync(path);
  writeFileSync(path, readFileSync(path, "utf8").replace(`${commits[1]} ${name}\n`, `${commits[2]} ${name}\n`));
  utimesSync(path, tick, tick);
  assert.equal([statSync(path).ino, statSync(path).size, statSync(path).mtimeMs], [was.ino, was.size, was.mtimeMs]);
  assert.is(b.read(name), commits[1], "the shared read");
  // Replaced (git renames a new file over it): whichever reader looks first reads it; both see it.
  const text = readFileSync(path, "utf8").replace(`${commits[2]} ${name}\n`, `${commits[3]} ${name}\n`);
  writeFileSync(`${path}.new`, text);
  renameSync(`${path}.new`, path);
  assert.is.not(statSync(path).ino, was.ino);
  assert.is(b.read(name), commits[3]);
  assert.is(a.read(name), commits[3]);
  assert.equal(a.list("refs/handoff/tasks/"), gitList(repo, "refs/handoff/tasks/"));
  assert.equal(b.list("refs/handoff/tasks/"), gitList(repo, "refs/handoff/tasks/"));
  // Another repository's reader keeps its own.
  const other = setup();
  gitOut(other.repo, "pack-refs", "--all", "--prune");
  assert.equal(new RefFiles(join(other.repo, ".git")).list("refs/handoff/tasks/"), gitList(other.repo, "refs/handoff/tasks/"));
  assert.is(a.read(name), commits[3]);
});

test.run();
