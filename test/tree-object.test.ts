// The one reader and writer of git trees and commit headers (src/git/tree-object.ts), against git's
// own: trees git wrote read back entry for entry, trees we write are the ones `git mktree` makes of
// the same entries (git's byte order, not JavaScript's string order), and a tree that is not well
// formed is refused by every reader built on it: a record read locally, a record received.
import { spawnSync } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { treeEntries, encodeTree, commitHeader, type TreeEntry } from "../src/git/tree-object.ts";
import { openStore } from "../src/store/store.ts";
import { validateReceived } from "../src/sync/validate-receive.ts";
import { blob, commit, eventMessage, setRef, tree } from "./support/forge.ts";
import { cleanEnv, cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

function git(repo: string, args: string[], input?: string | Buffer): Buffer {
  const r = spawnSync("git", args, { cwd: repo, input, env: cleanEnv() });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

/** Names whose git order (by bytes) differs from JavaScript's sort (by UTF-16 units), and folders sorted as if named `x/`. */
const NAMES: [string, "100644" | "40000"][] = [
  ["a", "40000"], ["a.b", "100644"], ["a-b", "100644"], ["a0", "100644"], ["ab", "40000"],
  ["\u{1F600}.txt", "100644"], ["\uFF01.txt", "100644"], ["é", "100644"], ["Z", "100644"],
];

test("a tree written here is the tree git mktree makes of the same entries; read back, entry for entry", () => {
  const repo = tempRepo();
  const empty = gitOut(repo, "mktree");
  const file = blob(repo, "x\n");
  const entries: TreeEntry[] = NAMES.map(([name, mode]) => ({ name, mode, oid: mode === "40000" ? empty : file }));
  const ours = encodeTree(entries);
  const listed = NAMES.map(([name, mode]) => `${mode === "40000" ? "040000 tree" : "100644 blob"} ${mode === "40000" ? empty : file}\t${name}`).join("\n") + "\n";
  const made = git(repo, ["mktree"], listed).toString().trim();
  assert.is(git(repo, ["hash-object", "-t", "tree", "--stdin"], ours).toString().trim(), made);
  // JavaScript's own order would put the emoji (a surrogate pair, 0xD83D) before U+FF01; git's bytes say otherwise.
  const order = treeEntries(git(repo, ["cat-file", "tree", made]), 20)!.map((e) => e.name);
  assert.ok(order.indexOf("\uFF01.txt") < order.indexOf("\u{1F600}.txt"), order.join(" "));
  assert.equal(treeEntries(ours, 20), treeEntries(git(repo, ["cat-file", "tree", made]), 20));
  assert.equal(new Set(treeEntries(ours, 20)!.map((e) => `${e.mode} ${e.name} ${e.oid}`)), new Set(entries.map((e) => `${e.mode} ${e.name} ${e.oid}`)));
  assert.equal(treeEntries(Buffer.alloc(0), 20), []);
});

test("a tree that is not well formed is refused, whatever is wrong with it", () => {
  const id = Buffer.alloc(20, 7);
  const entry = (head: string, oid = id) => Buffer.concat([Buffer.from(head, "latin1"), oid]);
  const good = entry("100644 a.json\0");
  assert.ok(treeEntries(good, 20));
  const bad: [string, Buffer][] = [
    ["a cut id", Buffer.concat([good, entry("100644 b\0", id.subarray(0, 19))])],
    ["no NUL", Buffer.concat([good, Buffer.from("100644 b", "latin1")])],
    ["no space", Buffer.concat([good, Buffer.from("100644b\0", "latin1"), id])],
    ["an empty name", entry("100644 \0")],
    ["a name with a slash", entry("100644 ../evil\0")],
    ["a mode that is not octal", entry("10064x a\0")],
    ["a mode too long", entry("1006440 a\0")],
    ["no mode", entry(" a\0")],
  ];
  for (const [what, data] of bad) assert.is(treeEntries(data, 20), null, what);
  // Byte-exact names: two names that UTF-8 decoding would merge stay two.
  const two = Buffer.concat([entry("100644 \xfe\0"), entry("100644 \xff\0")]);
  assert.is(new Set(treeEntries(two, 20, "latin1")!.map((e) => e.name)).size, 2);
  assert.is(new Set(treeEntries(two, 20)!.map((e) => e.name)).size, 1);
});

test("a commit's header as git wrote it: tree, parents in order, committer time", () => {
  const repo = tempRepo();
  const t = gitOut(repo, "mktree");
  const p1 = gitOut(repo, "commit-tree", t, "-m", "one");
  const p2 = gitOut(repo, "commit-tree", t, "-m", "two\n\nparent 0000 in the message");
  const merge = spawnSync("git", ["commit-tree", t, "-p", p1, "-p", p2, "-m", "merge"], { cwd: repo, env: { ...cleanEnv(), GIT_COMMITTER_DATE: "1700000000 +0100" }, encoding: "utf8" }).stdout.trim();
  const text = git(repo, ["cat-file", "commit", merge]).toString("utf8");
  assert.equal(commitHeader(text.slice(0, text.indexOf("\n\n"))), { tree: t, parents: [p1, p2], time: 1700000000 });
  const two = git(repo, ["cat-file", "commit", p2]).toString("utf8");
  assert.equal(commitHeader(two.slice(0, two.indexOf("\n\n"))).parents, [], "a message line is not a header");
});

test("a task whose tree is not well formed: one line naming the ref, a non-zero exit, nothing changed; on receive it is refused", async () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "fine", "--id", "fine"], { cwd: repo, agent: "lead" }).code, 0);
  // A tree git's own walk would die on (a cut id), written as is; a commit over it as the ref.
  const raw = Buffer.concat([Buffer.from("100644 format\0", "latin1"), Buffer.from(blob(repo, "git-handoff 1\n"), "hex"), Buffer.from("100644 task.json\0", "latin1"), Buffer.alloc(7, 1)]);
  const broken = git(repo, ["hash-object", "--literally", "-t", "tree", "-w", "--stdin"], raw).toString().trim();
  const event = { type: "created", task: "bad", agent: "x", at: new Date().toISOString(), scope: "primary", worktree: null, branch: null };
  setRef(repo, "refs/handoff/tasks/bad", commit(repo, { tree: broken, message: eventMessage(event) }));
  const before = gitOut(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/handoff/");
  const r = cli(["task", "show", "bad", "--json"], { cwd: repo, agent: "lead" });
  assert.ok(r.code !== 0, r.stdout);
  assert.is(r.json.error.code, "corrupt_state", r.stdout);
  assert.match(r.json.error.message, /refs\/handoff\/tasks\/bad is corrupt: a tree object is not well formed/);
  const text = cli(["task", "show", "bad"], { cwd: repo, agent: "lead" });
  // One line, then only the hint that removes such a ref.
  const [line, ...hints] = text.stderr.trim().split("\n");
  assert.match(line!, /^git-handoff: refs\/handoff\/tasks\/bad is corrupt/);
  assert.equal(hints, ["  fix_input: remove it: git handoff cancel bad --force --reason TEXT (logged in refs/handoff-local/repair-log)"], text.stderr);
  assert.is(gitOut(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/handoff/"), before);

  // The same tree as received: refused as invalid, as is a folder of files whose tree is cut.
  const store = await openStore({ cwd: repo, agent: "lead", env: cleanEnv() });
  const v = await validateReceived(store, "refs/handoff/tasks/bad", gitOut(repo, "rev-parse", "refs/handoff/tasks/bad"), null, new Date());
  assert.equal(v, { ok: false, kind: "invalid", reason: `the tree of ${gitOut(repo, "rev-parse", "refs/handoff/tasks/bad").slice(0, 12)} is not well formed` });
  const cut = git(repo, ["hash-object", "--literally", "-t", "tree", "-w", "--stdin"], Buffer.concat([Buffer.from("100644 a.txt\0", "latin1"), Buffer.alloc(5)])).toString().trim();
  const result = { task: "fine", status: "done", output: "", output_cut: 0, reason: null, exit_code: 0, files: [], refused: [], worker: "w", machine: null, at: new Date().toISOString() };
  const root = tree(repo, { format: "git-handoff 1\n", "result.json": JSON.stringify(result), files: { tree: cut } });
  const c = commit(repo, { tree: root, message: "result\n" });
  const w = await validateReceived(store, "refs/handoff/results/fine", c, null, new Date());
  assert.is(w.ok, false);
  assert.match((w as { reason: string }).reason, /files\/ in \w+ is not a well formed tree/);
  store.close();
});

test.run();
