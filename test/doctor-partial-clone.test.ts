// doctor in a partial clone (`git clone --filter=blob:none`): objects the promisor remote can
// send are not missing, so healthy refs are neither reported nor deleted by --repair; an object
// that is truly gone is still reported.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";
import { storeClaim, storeDone, storeSync, storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

async function partialClone(): Promise<string> {
  const work = tempRepo();
  const origin = join(tempDir(), "origin.git");
  gitOut(work, "init", "-q", "--bare", "-b", "main", origin);
  gitOut(origin, "config", "uploadpack.allowFilter", "true");
  gitOut(origin, "config", "uploadpack.allowAnySHA1InWant", "true");
  gitOut(work, "remote", "add", "origin", `file://${origin}`);
  gitOut(work, "push", "-q", "origin", "main");
  assert.is(cli(["init"], { cwd: work, agent: "alice" }).code, 0);
  // The tasks and their history, written in-process (support/seed.ts): the clone's filtered fetch
  // leaves the older blobs on the remote.
  const alice = { cwd: work, agent: "alice" };
  await storeTasks(alice, [{ id: "t1", objective: "upstream" }]);
  await storeClaim(alice, "t1");
  await storeDone(alice, "t1");
  await storeTasks(alice, [{ id: "t2", objective: "second" }]);
  await storeSync(alice);
  const clone = join(tempDir(), "partial");
  gitOut(tempDir(), "clone", "-q", "--filter=blob:none", `file://${origin}`, clone);
  // The records fetched by plain git, under the clone's filter: their blobs stay promised. (A sync
  // would fetch them all: receive reads a task's whole history on its first sight.)
  gitOut(clone, "fetch", "-q", "origin", "+refs/handoff/*:refs/handoff/*");
  return clone;
}

test("a partial clone: doctor finds no missing objects, and --repair deletes no ref", async () => {
  const clone = await partialClone();
  const before = gitOut(clone, "for-each-ref", "refs/handoff");
  assert.ok(before.includes("refs/handoff/tasks/t1"), before);
  // git itself counts objects of the records' history as promised, not missing.
  assert.match(gitOut(clone, "rev-list", "--objects", "--missing=print", "refs/handoff/tasks/t1"), /^\?/m);
  const d = cli(["doctor"], { cwd: clone, agent: "bob" });
  assert.not.match(d.stdout + d.stderr, /missing objects/);
  cli(["doctor", "--repair"], { cwd: clone, agent: "bob" });
  assert.is(gitOut(clone, "for-each-ref", "refs/handoff"), before);
});

test("a partial clone: an object truly gone (written here, never on the remote) is still reported", async () => {
  const clone = await partialClone();
  assert.is(cli(["task", "add", "local only", "--id", "t3"], { cwd: clone, agent: "bob" }).code, 0);
  const tip = gitOut(clone, "rev-parse", "refs/handoff/tasks/t3");
  const tree = gitOut(clone, "rev-parse", `${tip}^{tree}`);
  rmSync(join(clone, ".git/objects", tree.slice(0, 2), tree.slice(2)));
  const d = cli(["doctor"], { cwd: clone, agent: "bob" });
  assert.match(d.stdout + d.stderr, /missing objects/);
  assert.match(d.stdout + d.stderr, /t3/);
});

test("a partial clone's sync fetches the records whole in its one fetch: no blob of theirs is fetched later, one process each", async () => {
  const clone = await partialClone();
  // A clone that has not fetched the records yet (the one above fetched them with plain git).
  const fresh = join(tempDir(), "partial-fresh");
  gitOut(tempDir(), "clone", "-q", "--filter=blob:none", `file://${gitOut(clone, "config", "remote.origin.url").slice("file://".length)}`, fresh);
  const trace = join(tempDir(), "trace.json");
  const s = cli(["sync"], { cwd: fresh, agent: "bob", env: { GIT_TRACE2_EVENT: trace } });
  assert.is(s.code, 0, s.stdout + s.stderr);
  assert.not.match(gitOut(fresh, "rev-list", "--objects", "--missing=print", "--glob=refs/handoff/*"), /^\?/m, "nothing of the records left promised");
  // Each lazy fetch of a promised blob is a fetch process of git's own (with --promisor packs).
  const lazy = readFileSync(trace, "utf8").split("\n").filter((l) => l.includes('"event":"start"') && l.includes('"index-pack"') && l.includes("--promisor")).length;
  assert.ok(lazy <= 1, `${lazy} promisor fetches: the records' blobs were fetched one by one`);
  assert.match(cli(["task", "show", "t1"], { cwd: fresh, agent: "bob" }).stdout, /upstream/);
});

test.run();
