// An object's type and size without reading it (ObjectReader.info), against git's own answers,
// loose and packed (a small packed one read in process, whole: its pack keeps it for the read
// that follows); and what comes from another clone measured before it is read: a record with a
// task.json far past its bound is refused without its bytes ever being read into memory.
import { spawnSync } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ObjectReader } from "../src/git/object-reader.ts";
import { openStore } from "../src/store/store.ts";
import { validateReceived } from "../src/sync/validate-receive.ts";
import { readBundle } from "../src/work/bundle.ts";
import * as z from "zod/mini";
import { blob, commit, eventMessage } from "./support/forge.ts";
import { cleanEnv, cleanupTemp, gitOut, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

function hashBig(repo: string, bytes: number, fill = "x"): string {
  const r = spawnSync("git", ["hash-object", "-w", "--stdin"], { cwd: repo, input: Buffer.alloc(bytes, fill), env: cleanEnv(), encoding: "utf8" });
  return r.stdout.trim();
}

test("type and size as git says them: loose (small, large and compressible), packed, missing", async () => {
  const repo = tempRepo();
  const small = hashBig(repo, 10);
  const large = hashBig(repo, 3_000_000);
  const t = gitOut(repo, "mktree");
  const c = gitOut(repo, "commit-tree", t, "-m", "x");
  const git = (...a: string[]) => gitOut(repo, ...a);
  const reader = new ObjectReader(`${repo}/.git`, repo);
  for (const oid of [small, large, t, c]) assert.equal(await reader.info(oid), { type: git("cat-file", "-t", oid), size: Number(git("cat-file", "-s", oid)) }, oid);
  assert.is(await reader.info("0".repeat(40)), null);
  reader.close();
  // Packed, loose files gone: the small ones measured in process from the pack (no
  // `git cat-file --batch-check` started for them), the one past the pack reader's bound by git.
  gitOut(repo, "update-ref", "refs/keep", c);
  gitOut(repo, "tag", "keep-large", large);
  gitOut(repo, "repack", "-a", "-d", "-q");
  gitOut(repo, "prune-packed");
  const packed = new ObjectReader(`${repo}/.git`, repo);
  const checker = () => (packed as unknown as { check: unknown }).check;
  for (const oid of [t, c]) assert.equal(await packed.info(oid), { type: git("cat-file", "-t", oid), size: Number(git("cat-file", "-s", oid)) }, oid);
  assert.is(checker(), null, "no --batch-check child for objects the packs answer");
  assert.equal(await packed.info(large), { type: "blob", size: 3_000_000 });
  assert.ok(checker(), "git measures what is past the pack reader's bound");
  assert.is(await packed.info("1".repeat(40)), null);
  // And read whole through `git cat-file --batch` (many chunks, joined once), between two small ones.
  const [a, b, z] = await Promise.all([packed.read(t), packed.read(large), packed.read(c)]);
  assert.is(a?.type, "tree");
  assert.ok(b?.data.equals(Buffer.alloc(3_000_000, "x")));
  assert.is(z?.type, "commit");
  packed.close();
});

test("a received task.json past its bound is refused unread", async () => {
  const repo = tempRepo();
  const format = "git-handoff 1\n";
  const big = hashBig(repo, 4_000_000, "{");
  const t = spawnSync("git", ["mktree"], { cwd: repo, input: `100644 blob ${blob(repo, format)}\tformat\n100644 blob ${big}\ttask.json\n`, encoding: "utf8", env: cleanEnv() }).stdout.trim();
  const event = { type: "created", task: "huge", agent: "x", at: new Date().toISOString(), scope: "primary", worktree: null, branch: null };
  const c = commit(repo, { tree: t, message: eventMessage(event) });
  const store = await openStore({ cwd: repo, agent: "lead", env: cleanEnv() });
  const read: string[] = [];
  const orig = store.reader.read.bind(store.reader);
  store.reader.read = (oid: string) => {
    read.push(oid);
    return orig(oid);
  };
  const v = await validateReceived(store, "refs/handoff/tasks/huge", c, null, new Date());
  assert.equal(v, { ok: false, kind: "invalid", reason: "task.json is 4000000 bytes; at most 524288" });
  assert.ok(read.includes(c), "the commit was read");
  assert.not.ok(read.includes(big), "the blob was not");
  store.close();
});

test("a task's received files past their bound are refused, the file past it unread", async () => {
  const repo = tempRepo();
  const small = hashBig(repo, 10);
  const big = hashBig(repo, 3_000_000);
  const files = spawnSync("git", ["mktree"], { cwd: repo, input: `100644 blob ${small}\ta.txt\n100644 blob ${big}\tb.txt\n`, encoding: "utf8", env: cleanEnv() }).stdout.trim();
  const t = spawnSync("git", ["mktree"], { cwd: repo, input: `100644 blob ${blob(repo, "git-handoff 1\n")}\tformat\n040000 tree ${files}\tfiles\n100644 blob ${blob(repo, "{}\n")}\tresult.json\n`, encoding: "utf8", env: cleanEnv() }).stdout.trim();
  const c = commit(repo, { tree: t, message: "result\n" });
  const store = await openStore({ cwd: repo, agent: "lead", env: cleanEnv() });
  const read: string[] = [];
  const orig = store.reader.read.bind(store.reader);
  store.reader.read = (oid: string) => {
    read.push(oid);
    return orig(oid);
  };
  const bundle = await readBundle(store, "refs/handoff/results/x", c, "result.json", z.unknown());
  assert.is((await bundle.files("files", 5_000_000)).get("b.txt")?.length, 3_000_000, "within the bound: read");
  read.length = 0;
  try {
    await bundle.files("files", 1_000_000);
    assert.unreachable("refused");
  } catch (e) {
    assert.match((e as Error).message, /refs\/handoff\/results\/x holds more than 1000000 bytes of files in files\//);
  }
  assert.ok(read.includes(small), "the small file was read");
  assert.not.ok(read.includes(big), "the one past the bound was not");
  store.close();
});

test.run();
