// Long-running processes, and one-shot commands, write plain ref updates in-process through git's
// own lock protocol (loose-ref-writer.ts). What they leave must be exactly what `git update-ref` leaves, a lost
// compare-and-swap must change nothing, and git processes racing on the same ref must never both
// win with it: checked here against real git.
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LooseRefWriter, refWritePolicy } from "../src/git/loose-ref-writer.ts";
import { RefFiles } from "../src/git/ref-files.ts";
import { cleanupTemp, gitOut, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

/** A repository with a chain of `n` commits on main; returns their ids, oldest first. */
function chain(repo: string, n: number): string[] {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    gitOut(repo, "commit", "-q", "--allow-empty", "-m", `c${i}`);
    ids.push(gitOut(repo, "rev-parse", "HEAD").trim());
  }
  return ids;
}

async function open(repo: string): Promise<LooseRefWriter> {
  const refs = new RefFiles(`${repo}/.git`);
  const w = await LooseRefWriter.open(repo, `${repo}/.git`, repo, refs);
  if (!w) throw new Error("expected an in-process writer for a plain repository");
  return w;
}

/** Waits until `done` holds or ten seconds pass (the assertion after it then says what is wrong). */
async function eventually(done: () => boolean): Promise<void> {
  for (const end = Date.now() + 10_000; !done() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
}

const refFile = (repo: string, ref: string) => `${repo}/.git/${ref}`;
const tempsLeft = (repo: string) => (existsSync(`${repo}/.git/handoff/ref-temps`) ? readdirSync(`${repo}/.git/handoff/ref-temps`) : []);
function lockFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...lockFiles(`${dir}/${e.name}`));
    else if (e.name.endsWith(".lock")) out.push(`${dir}/${e.name}`);
  }
  return out;
}

test("a two-ref update leaves the same files git update-ref leaves, and git reads them", async () => {
  const repo = tempRepo();
  const [a, b] = chain(repo, 2) as [string, string];
  for (const ref of ["refs/handoff/tasks/t-1", "refs/handoff/leases", "refs/handoff/tasks/t-2"]) gitOut(repo, "update-ref", ref, a);
  const w = await open(repo);
  const r = w.update([
    { ref: "refs/handoff/tasks/t-1", new: b, old: a },
    { ref: "refs/handoff/leases", new: b, old: a },
  ]);
  assert.equal(r, { ok: true });
  // The same ref written by git, for comparison: content and mode.
  gitOut(repo, "update-ref", "refs/handoff/tasks/t-2", b, a);
  for (const ref of ["refs/handoff/tasks/t-1", "refs/handoff/leases"]) {
    assert.is(readFileSync(refFile(repo, ref), "latin1"), `${b}\n`);
    assert.is(statSync(refFile(repo, ref)).mode, statSync(refFile(repo, "refs/handoff/tasks/t-2")).mode);
    assert.is(gitOut(repo, "rev-parse", ref).trim(), b);
  }
  // The temp's own name on the ref's inode goes once the writer is quiet (off the write's path,
  // so when depends on the machine's load: waited for, with a bound).
  const nlinks = () => ["refs/handoff/tasks/t-1", "refs/handoff/leases"].map((ref) => statSync(refFile(repo, ref)).nlink);
  await eventually(() => nlinks().every((n) => n === 1));
  assert.equal(nlinks(), [1, 1], "no second name left on the ref's inode");
  assert.is(gitOut(repo, "for-each-ref", "--format=%(objectname) %(refname)", "refs/handoff/").trim().split("\n").length, 3);
  gitOut(repo, "fsck", "--strict", "--no-dangling");
  assert.equal(lockFiles(`${repo}/.git/refs`), []);
  w.close();
  await eventually(() => tempsLeft(repo).length === 0);
  assert.equal(tempsLeft(repo), [], "temp files removed on close");
});

test("a stale expected value changes nothing and says where the ref is", async () => {
  const repo = tempRepo();
  const [a, b, c] = chain(repo, 3) as [string, string, string];
  gitOut(repo, "update-ref", "refs/handoff/tasks/t-1", a);
  gitOut(repo, "update-ref", "refs/handoff/leases", c);
  const w = await open(repo);
  const r = w.update([
    { ref: "refs/handoff/tasks/t-1", new: b, old: a },
    { ref: "refs/handoff/leases", new: b, old: a },
  ]);
  if (!r || r.ok) throw new Error(`expected a refusal, got ${JSON.stringify(r)}`);
  assert.is(r.reason, "stale");
  assert.match(r.message, `is at ${c} but expected ${a}`);
  assert.is(gitOut(repo, "rev-parse", "refs/handoff/tasks/t-1").trim(), a, "the first ref, locked and checked, is left as it was");
  assert.is(gitOut(repo, "rev-parse", "refs/handoff/leases").trim(), c);
  assert.equal(lockFiles(`${repo}/.git/refs`), []);
  w.close();
});

test("a ref git holds locked is refused as locked, and git's lock file is left alone", async () => {
  const repo = tempRepo();
  const [a, b] = chain(repo, 2) as [string, string];
  gitOut(repo, "update-ref", "refs/handoff/leases", a);
  writeFileSync(`${refFile(repo, "refs/handoff/leases")}.lock`, `${b}\n`);
  const w = await open(repo);
  const r = w.update([{ ref: "refs/handoff/leases", new: b, old: a }]);
  if (!r || r.ok) throw new Error(`expected a refusal, got ${JSON.stringify(r)}`);
  assert.is(r.reason, "locked");
  assert.ok(existsSync(`${refFile(repo, "refs/handoff/leases")}.lock`));
  assert.is(readFileSync(refFile(repo, "refs/handoff/leases"), "latin1"), `${a}\n`);
  w.close();
});

test("a packed ref is updated as git does: a loose file over the packed entry", async () => {
  const repo = tempRepo();
  const [a, b] = chain(repo, 2) as [string, string];
  gitOut(repo, "update-ref", "refs/handoff/tasks/t-1", a);
  gitOut(repo, "pack-refs", "--all");
  assert.not.ok(existsSync(refFile(repo, "refs/handoff/tasks/t-1")));
  const w = await open(repo);
  // Its folder is gone after packing: that is git's to make.
  assert.is(w.update([{ ref: "refs/handoff/tasks/t-1", new: b, old: a }]), null);
  mkdirSync(`${repo}/.git/refs/handoff/tasks`, { recursive: true });
  assert.equal(w.update([{ ref: "refs/handoff/tasks/t-1", new: b, old: b }])?.ok, false, "the packed value is the one checked");
  assert.equal(w.update([{ ref: "refs/handoff/tasks/t-1", new: b, old: a }]), { ok: true });
  assert.is(gitOut(repo, "rev-parse", "refs/handoff/tasks/t-1").trim(), b);
  assert.match(readFileSync(`${repo}/.git/packed-refs`, "latin1"), `${a} refs/handoff/tasks/t-1`);
  gitOut(repo, "fsck", "--strict", "--no-dangling");
  w.close();
});

test("what only git does goes to git: clashing creations, deletions, reflogs, the reference-transaction hook, shared repositories, fsync", async () => {
  const repo = tempRepo();
  const [a, b] = chain(repo, 2) as [string, string];
  gitOut(repo, "update-ref", "refs/handoff/leases", a);
  const w = await open(repo);
  assert.is(w.update([{ ref: "refs/handoff/tasks/new", new: b, old: null }])?.ok, true, "a creation that clashes with nothing is written here");
  assert.is(gitOut(repo, "rev-parse", "refs/handoff/tasks/new"), b);
  assert.is(w.update([{ ref: "refs/handoff/leases", new: null, old: a }]), null, "a deletion");
  assert.is(w.update([{ ref: "refs/heads/main", new: a, old: b }]), null, "outside refs/handoff/");
  mkdirSync(`${repo}/.git/logs/refs/handoff`, { recursive: true });
  writeFileSync(`${repo}/.git/logs/refs/handoff/leases`, "");
  assert.is(w.update([{ ref: "refs/handoff/leases", new: b, old: a }]), null, "a ref with a reflog");
  rmSync(`${repo}/.git/logs/refs/handoff/leases`);
  assert.equal(w.update([{ ref: "refs/handoff/leases", new: b, old: a }]), { ok: true }, "without the reflog it is ours");
  mkdirSync(`${repo}/.git/hooks`, { recursive: true });
  writeFileSync(`${repo}/.git/hooks/reference-transaction`, "#!/bin/sh\nexit 0\n");
  chmodSync(`${repo}/.git/hooks/reference-transaction`, 0o755);
  assert.is(w.update([{ ref: "refs/handoff/leases", new: a, old: b }]), null, "a reference-transaction hook");
  w.close();
  for (const [key, value] of [["core.logAllRefUpdates", "always"], ["core.sharedRepository", "group"], ["core.fsync", "reference"]]) {
    const other = tempRepo();
    gitOut(other, "config", key!, value!);
    const refs = new RefFiles(`${other}/.git`);
    assert.is(await LooseRefWriter.open(other, `${other}/.git`, other, refs), null, key);
  }
  assert.is(refWritePolicy("core.hookspath\nmy-hooks\0", "/r/.git", "/r").hooksDir, "/r/my-hooks");
});

test("racing git update-ref processes on the same ref: every compare-and-swap that won is one step of the chain", async () => {
  const repo = tempRepo();
  const ids = chain(repo, 121);
  const ref = "refs/handoff/leases";
  gitOut(repo, "update-ref", ref, ids[0]!);
  const w = await open(repo);
  // Both sides step the ref along the same chain, each from what it read: if both ever won the
  // same step, the wins would add up to more steps than the ref moved.
  const next = new Map(ids.slice(0, -1).map((id, i) => [id, ids[i + 1]!]));
  const refs = new RefFiles(`${repo}/.git`);
  let gitWins = 0;
  let gitAttempts = 0;
  let ourWins = 0;
  const last = ids[ids.length - 1]!;
  const gitSide = (async () => {
    for (let n = 0; n < 5000; n++) {
      const cur = refs.read(ref)!;
      if (cur === last) return;
      const code = await new Promise<number>((resolve) => {
        const p = spawn("git", ["update-ref", ref, next.get(cur)!, cur], { cwd: repo, stdio: "ignore" });
        p.on("close", (c) => resolve(c ?? 1));
      });
      gitAttempts++;
      if (code === 0) gitWins++;
    }
  })();
  // Ours tries while git's processes are in flight, then lets git finish one attempt, so both
  // sides keep trying until the end of the chain whatever the machine's speed. Every fourth
  // round ours stands back until git has won a step: where a git process takes longer to start
  // than ours takes to write, ours would otherwise win every race, and a race one side cannot
  // lose would check nothing.
  for (let n = 0; n < 5000; n++) {
    const cur = refs.read(ref)!;
    if (cur === last) break;
    if (n % 4 === 3) {
      const won = gitWins;
      while (gitWins === won && refs.read(ref) !== last) await new Promise((r) => setTimeout(r, 1));
      continue;
    }
    const r = w.update([{ ref, new: next.get(cur)!, old: cur }]);
    if (r?.ok) ourWins++;
    const seen = gitAttempts;
    while (gitAttempts === seen && refs.read(ref) !== last) await new Promise((r) => setTimeout(r, 1));
  }
  await gitSide;
  assert.is(refs.read(ref), last);
  assert.is(ourWins + gitWins, ids.length - 1, `ours ${ourWins} + git's ${gitWins} wins`);
  assert.ok(ourWins > 0 && gitWins > 0, `both sides won some steps (ours ${ourWins}, git's ${gitWins})`);
  assert.equal(lockFiles(`${repo}/.git/refs`), []);
  gitOut(repo, "fsck", "--strict", "--no-dangling");
  w.close();
});

test("a one-shot writer waits for a lock another process holds, as git does, up to core.filesRefLockTimeout", () => {
  const repo = tempRepo();
  const [a, b, c] = chain(repo, 3) as [string, string, string];
  gitOut(repo, "update-ref", "refs/handoff/leases", a);
  gitOut(repo, "update-ref", "refs/handoff-remotes/origin/leases", a);
  const refs = new RefFiles(`${repo}/.git`);
  const policy = refWritePolicy("", `${repo}/.git`, repo);
  const w = new LooseRefWriter(`${repo}/.git`, policy, refs, true);
  // Held for 40 ms by another process (git's update-ref would wait for it too): the write waits.
  const lock = `${repo}/.git/refs/handoff/leases.lock`;
  writeFileSync(lock, "");
  const holder = spawn("sh", ["-c", `sleep 0.04; rm -f '${lock}'`], { stdio: "ignore" });
  const t0 = Date.now();
  const r = w.update([{ ref: "refs/handoff/leases", new: b, old: a }, { ref: "refs/handoff-remotes/origin/leases", new: b, old: a }]);
  assert.equal(r, { ok: true }, "written once the lock was let go");
  assert.ok(Date.now() - t0 >= 20, `waited ${Date.now() - t0} ms`);
  assert.is(gitOut(repo, "rev-parse", "refs/handoff/leases"), b);
  assert.is(gitOut(repo, "rev-parse", "refs/handoff-remotes/origin/leases"), b, "tracking refs are taken too");
  holder.kill();
  // Held for good: refused as locked after about the timeout, nothing changed, no lock of ours left.
  writeFileSync(lock, "");
  const t1 = Date.now();
  const held = w.update([{ ref: "refs/handoff/leases", new: c, old: b }]);
  const waited = Date.now() - t1;
  assert.is(held?.ok, false);
  assert.is(held && !held.ok && held.reason, "locked");
  assert.ok(waited >= 80 && waited < 2000, `waited ${waited} ms`);
  assert.is(gitOut(repo, "rev-parse", "refs/handoff/leases"), b);
  rmSync(lock);
  assert.equal(lockFiles(`${repo}/.git/refs`), []);
  assert.is(spawnSync("git", ["fsck", "--no-dangling"], { cwd: repo }).status, 0);
  w.close();
});

test("creations: written here as git would, or left to git where a name clashes; a lost creation race changes nothing", async () => {
  const repo = tempRepo();
  const [a, b] = chain(repo, 2) as [string, string];
  const w = await open(repo);
  // A new folder and ref, and its tracking ref, in one transaction.
  assert.equal(w.update([{ ref: "refs/handoff/results/r1", new: a, old: null }, { ref: "refs/handoff-remotes/origin/results/r1", new: a, old: null }]), { ok: true });
  assert.is(gitOut(repo, "rev-parse", "refs/handoff/results/r1"), a);
  assert.is(gitOut(repo, "rev-parse", "refs/handoff-remotes/origin/results/r1"), a);
  // It exists now: a second creation is git's to refuse, and refuses.
  assert.is(w.update([{ ref: "refs/handoff/results/r1", new: b, old: null }]), null, "an existing loose ref");
  // Packed: the ref itself, a folder of it, a ref inside it as a folder.
  gitOut(repo, "update-ref", "refs/handoff/tasks/p1", a);
  gitOut(repo, "update-ref", "refs/handoff/leases", a);
  gitOut(repo, "pack-refs", "--all");
  assert.is(w.update([{ ref: "refs/handoff/tasks/p1", new: b, old: null }]), null, "a packed ref of that name");
  assert.is(w.update([{ ref: "refs/handoff/leases/x", new: b, old: null }]), null, "a packed ref where a folder would be");
  assert.is(w.update([{ ref: "refs/handoff/tasks", new: b, old: null }]), null, "packed refs inside it");
  // A loose file where a folder would be.
  gitOut(repo, "update-ref", "refs/handoff/agents", a);
  assert.is(w.update([{ ref: "refs/handoff/agents/x", new: b, old: null }]), null, "a loose ref where a folder would be");
  // Lost race: another process created it between the check and the lock.
  const lockDir = `${repo}/.git/refs/handoff/memories`;
  mkdirSync(lockDir, { recursive: true });
  writeFileSync(`${lockDir}/m1.lock`, "");
  const locked = w.update([{ ref: "refs/handoff/memories/m1", new: a, old: null }]);
  assert.is(locked?.ok, false, "a creation whose lock is held");
  rmSync(`${lockDir}/m1.lock`);
  assert.equal(lockFiles(`${repo}/.git/refs`), []);
  assert.is(spawnSync("git", ["fsck", "--no-dangling"], { cwd: repo }).status, 0);
  w.close();
});


/** Until the writer's temp folder has stopped changing: its pool made, replaced names removed. */
async function settled(repo: string): Promise<void> {
  let last = "";
  for (let i = 0; i < 200; i++) {
    await new Promise((r) => setTimeout(r, 25));
    const now = tempsLeft(repo).map((t) => `${t}:${statSync(`${repo}/.git/handoff/ref-temps/${t}`, { throwIfNoEntry: false })?.size}`).sort().join(" ");
    if (now && now === last) return;
    last = now;
  }
}

test("temps made ahead hold a placeholder on disk and are written over in place: each ref ends as exactly its id, in SHA-1 and SHA-256 repositories alike", async () => {
  for (const format of ["sha1", "sha256"]) {
    const repo = tempDir("handoff-lrw-");
    gitOut(repo, "init", "-q", `--object-format=${format}`, "-b", "main");
    gitOut(repo, "config", "user.email", "t@example.com");
    gitOut(repo, "config", "user.name", "t");
    const ids = chain(repo, 4);
    gitOut(repo, "update-ref", "refs/handoff/leases", ids[0]!);
    const w = await open(repo);
    w.prepareAhead();
    // The pool is made on the thread pool, each placeholder flushed (makeOne).
    await settled(repo);
    const length = ids[0]!.length + 1;
    for (const t of tempsLeft(repo)) assert.is(statSync(`${repo}/.git/handoff/ref-temps/${t}`).size, 41, "made before the writer saw an id: the length of a SHA-1 id");
    for (let i = 1; i < ids.length; i++) {
      assert.equal(w.update([{ ref: "refs/handoff/leases", new: ids[i]!, old: ids[i - 1]! }]), { ok: true });
      assert.is(readFileSync(refFile(repo, "refs/handoff/leases"), "latin1"), `${ids[i]}\n`);
      assert.is(statSync(refFile(repo, "refs/handoff/leases")).size, length);
      assert.is(gitOut(repo, "rev-parse", "refs/handoff/leases").trim(), ids[i]);
    }
    // After the first write of a SHA-256 id, the pool is made at its length.
    await settled(repo);
    for (const t of tempsLeft(repo).filter((n) => !n.endsWith(".old"))) assert.is(statSync(`${repo}/.git/handoff/ref-temps/${t}`).size, length, t);
    gitOut(repo, "fsck", "--strict", "--no-dangling");
    w.close();
    await eventually(() => tempsLeft(repo).length === 0);
    assert.equal(tempsLeft(repo), [], "temp files removed on close");
  }
});

test.run();
