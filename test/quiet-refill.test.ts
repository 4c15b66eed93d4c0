// Background work of long-running processes (temp files made ahead, replaced ref files removed)
// waits until the process is quiet, so it does not run in the middle of the request that used
// them (quiet-trigger.ts); a pool that runs low is refilled at once all the same.
import { existsSync, readdirSync, renameSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { QuietTrigger } from "../src/git/quiet-trigger.ts";
import { TempFiles } from "../src/git/temp-files.ts";
import { LooseRefWriter, REF_TEMP_POOL } from "../src/git/loose-ref-writer.ts";
import { RefFiles } from "../src/git/ref-files.ts";
import { ObjectWriter } from "../src/git/object-writer.ts";
import { ownFolder } from "../src/git/safe-file.ts";
import { rmSync } from "node:fs";
import { cleanupTemp, gitOut, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

function tempObjects(repo: string): number {
  let n = 0;
  for (const d of readdirSync(`${repo}/.git/objects`)) {
    if (/^[0-9a-f]{2}$/.test(d)) n += readdirSync(`${repo}/.git/objects/${d}`).filter((f) => f.startsWith("tmp_obj_")).length;
  }
  return n;
}

test("quiet trigger: pokes within the quiet spell start the wait again; the work runs once, after it", async () => {
  let runs = 0;
  const q = new QuietTrigger(() => runs++, 60);
  const t0 = Date.now();
  for (let i = 0; i < 5; i++) {
    q.poke();
    await sleep(20);
  }
  assert.is(runs, 0, "still being poked: not quiet yet");
  await until(() => runs === 1, "the work after the quiet spell");
  assert.ok(Date.now() - t0 >= 80 + 60 - 5, "ran only once the pokes had stopped for the quiet spell");
  await sleep(120);
  assert.is(runs, 1, "one run for one quiet spell");
  q.poke();
  q.cancel();
  await sleep(120);
  assert.is(runs, 1, "a cancelled wait runs nothing");
});

test("temp objects: taken ones are made again only once the process is quiet, unless the pool runs low", async () => {
  const repo = tempRepo();
  const pool = new TempFiles(`${repo}/.git/objects`, 16, 300);
  try {
    pool.fill();
    // The first fill also makes every fan-out folder, then tops the pool up again: let it end.
    await until(() => tempObjects(repo) === 16 && readdirSync(`${repo}/.git/objects`).filter((d) => /^[0-9a-f]{2}$/.test(d)).length === 256, "the pool filled");
    await sleep(100);
    for (let i = 0; i < 6; i++) assert.ok(pool.take(), "a temp file ready");
    // What a request does between its writes and its answer: awaits that let other work run.
    await turns(5);
    await sleep(100);
    assert.is(tempObjects(repo), 16, "the taken files are still there (not used here) and no new one was made meanwhile");
    await until(() => tempObjects(repo) === 22, "the pool made up once quiet");
    // A file is on disk a moment before its creation's callback puts it in the pool.
    await sleep(50);
    // Taken down to a quarter: made again at once, quiet or not.
    for (let i = 0; i < 13; i++) assert.ok(pool.take(), "a temp file ready");
    await until(() => tempObjects(repo) > 22, "a low pool refilled at once");
    assert.ok(tempObjects(repo) > 22);
  } finally {
    pool.close();
  }
});

/**
 * A repository whose refs/handoff/tasks/t-1 the in-process ref writer has just moved from one
 * commit (a) to another (b), its temp pool filled first.
 */
async function writerAfterOneUpdate(): Promise<{ repo: string; a: string; b: string; w: LooseRefWriter; dir: string }> {
  const repo = tempRepo();
  gitOut(repo, "commit", "-q", "--allow-empty", "-m", "a");
  const a = gitOut(repo, "rev-parse", "HEAD").trim();
  gitOut(repo, "commit", "-q", "--allow-empty", "-m", "b");
  const b = gitOut(repo, "rev-parse", "HEAD").trim();
  gitOut(repo, "update-ref", "refs/handoff/tasks/t-1", a);
  const w = await LooseRefWriter.open(repo, `${repo}/.git`, repo, new RefFiles(`${repo}/.git`));
  if (!w) throw new Error("expected an in-process writer for a plain repository");
  const dir = `${repo}/.git/handoff/ref-temps`;
  try {
    w.prepareAhead();
    await until(() => existsSync(dir) && readdirSync(dir).length === REF_TEMP_POOL, "the ref temp pool filled");
    assert.equal(w.update([{ ref: "refs/handoff/tasks/t-1", new: b, old: a }]), { ok: true });
  } catch (e) {
    w.close();
    throw e;
  }
  return { repo, a, b, w, dir };
}

test("ref writer: a replaced ref file's second name is removed once the process is quiet, and the temp pool made up", async () => {
  const { repo, b, w, dir } = await writerAfterOneUpdate();
  try {
    const old = () => readdirSync(dir).filter((f) => f.endsWith(".old"));
    assert.is(old().length, 1, "the replaced file keeps a second name until the process is quiet");
    await until(() => old().length === 0 && readdirSync(dir).length === REF_TEMP_POOL, "second names removed (the replaced file's, the temp's) and pool made up");
    assert.is(gitOut(repo, "rev-parse", "refs/handoff/tasks/t-1").trim(), b);
  } finally {
    w.close();
  }
});

test("ref writer: a refill after the repository was moved away makes nothing at its old path, and writes go on where it is back", async () => {
  // Found by the cache-coherence walk (HANDOFF_FUZZ_BULK=600 HANDOFF_FUZZ_SEED=1024, at times):
  // the mcp server's refill after a write made `<old>/.git/handoff/ref-temps` with mkdir -p, a
  // ghost of the moved repository (the walk's rename back then failed: not empty).
  const { repo, a, b, w } = await writerAfterOneUpdate();
  try {
    // In the same turn as the write, before the quiet spell that starts the refill.
    renameSync(repo, `${repo}.moved`);
    await sleep(100);
    assert.not.ok(existsSync(repo), `nothing made at the old path: ${existsSync(repo) ? readdirSync(repo, { recursive: true }).join(", ") : ""}`);
    renameSync(`${repo}.moved`, repo);
    assert.equal(w.update([{ ref: "refs/handoff/tasks/t-1", new: a, old: b }]), { ok: true });
    assert.is(gitOut(repo, "rev-parse", "refs/handoff/tasks/t-1").trim(), a);
  } finally {
    w.close();
    if (existsSync(`${repo}.moved`)) renameSync(`${repo}.moved`, repo);
  }
});

test("state folders: missing ones are made below a git dir that is there, never the git dir itself", () => {
  const repo = tempRepo();
  ownFolder(`${repo}/.git/handoff/pending-x/inner`);
  assert.ok(existsSync(`${repo}/.git/handoff/pending-x/inner`), "the state folder and those below it made");
  const gone = `${repo}/gone`;
  for (const dir of [`${gone}/.git/handoff`, `${gone}/.git/handoff/ref-temps`, `${gone}/.git/handoff/a/b`]) {
    assert.throws(() => ownFolder(dir), /ENOENT/, dir);
    assert.not.ok(existsSync(gone), `nothing made for ${dir}`);
  }
  ownFolder(`${repo}/not-state/a/b`);
  assert.ok(existsSync(`${repo}/not-state/a/b`), "elsewhere (a cache folder of the user's), mkdir -p as before");
});

test("object writer: a write after the repository was moved away makes nothing at its old path", () => {
  // The fan-out folder was made with mkdir -p when its parent was missing: a running server's
  // write after its repository moved made `<old>/.git/objects/xx`, a ghost of the repository.
  const repo = tempRepo();
  const w = new ObjectWriter(`${repo}/.git`, "sha1");
  try {
    renameSync(repo, `${repo}.moved`);
    for (const text of ["one\n", "two\n", "three\n"]) assert.throws(() => w.write("blob", text), /ENOENT|repository/);
    assert.not.ok(existsSync(repo), `nothing made at the old path: ${existsSync(repo) ? readdirSync(repo, { recursive: true }).join(", ") : ""}`);
    renameSync(`${repo}.moved`, repo);
    const oid = w.write("blob", "back\n");
    w.settle(); // the failed writes are still pending (no ref names them): written now, as unreferenced loose objects
    assert.is(gitOut(repo, "cat-file", "-p", oid), "back");
  } finally {
    w.close();
    if (existsSync(`${repo}.moved`)) renameSync(`${repo}.moved`, repo);
  }
});

test("object writer: an object written again within seconds is not looked for; the settle after the update writes it back if a prune removed it", async () => {
  const repo = tempRepo();
  const w = new ObjectWriter(`${repo}/.git`, "sha1");
  const path = (oid: string) => `${repo}/.git/objects/${oid.slice(0, 2)}/${oid.slice(2)}`;
  try {
    w.prepareAhead();
    const oid = w.write("blob", "written, then pruned\n");
    assert.is(w.settle(), 0);
    assert.is(gitOut(repo, "cat-file", "-p", oid), "written, then pruned");
    rmSync(path(oid));
    assert.is(w.write("blob", "written, then pruned\n"), oid);
    assert.not.ok(existsSync(path(oid)), "a fresh known object is taken as there");
    assert.is(w.settle(), 1, "the settle after the ref update restores it");
    assert.is(gitOut(repo, "cat-file", "-p", oid), "written, then pruned");
  } finally {
    w.close();
  }
});

test.run();
