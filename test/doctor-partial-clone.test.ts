// doctor in a partial clone (`git clone --filter=blob:none`): objects the promisor remote can
// send are not missing, so healthy refs are neither reported nor deleted by --repair; an object
// that is truly gone is still reported.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

function partialClone(): string {
  const work = tempRepo();
  const origin = join(tempDir(), "origin.git");
  gitOut(work, "init", "-q", "--bare", "-b", "main", origin);
  gitOut(origin, "config", "uploadpack.allowFilter", "true");
  gitOut(origin, "config", "uploadpack.allowAnySHA1InWant", "true");
  gitOut(work, "remote", "add", "origin", `file://${origin}`);
  gitOut(work, "push", "-q", "origin", "main");
  assert.is(cli(["init"], { cwd: work, agent: "alice" }).code, 0);
  assert.is(cli(["task", "add", "upstream", "--id", "t1"], { cwd: work, agent: "alice" }).code, 0);
  // A history: the clone's filtered fetch leaves its older blobs on the remote.
  assert.is(cli(["claim", "t1"], { cwd: work, agent: "alice" }).code, 0);
  assert.is(cli(["done", "t1"], { cwd: work, agent: "alice" }).code, 0);
  assert.is(cli(["task", "add", "second", "--id", "t2"], { cwd: work, agent: "alice" }).code, 0);
  assert.is(cli(["sync"], { cwd: work, agent: "alice" }).code, 0);
  const clone = join(tempDir(), "partial");
  gitOut(tempDir(), "clone", "-q", "--filter=blob:none", `file://${origin}`, clone);
  // The records fetched by plain git, under the clone's filter: their blobs stay promised. (A sync
  // would fetch them all: receive reads a task's whole history on its first sight.)
  gitOut(clone, "fetch", "-q", "origin", "+refs/handoff/*:refs/handoff/*");
  return clone;
}

test("a partial clone: doctor finds no missing objects, and --repair deletes no ref", () => {
  const clone = partialClone();
  const before = gitOut(clone, "for-each-ref", "refs/handoff");
  assert.ok(before.includes("refs/handoff/tasks/t1"), before);
  // git itself counts objects of the records' history as promised, not missing.
  assert.match(gitOut(clone, "rev-list", "--objects", "--missing=print", "refs/handoff/tasks/t1"), /^\?/m);
  const d = cli(["doctor"], { cwd: clone, agent: "bob" });
  assert.not.match(d.stdout + d.stderr, /missing objects/);
  cli(["doctor", "--repair"], { cwd: clone, agent: "bob" });
  assert.is(gitOut(clone, "for-each-ref", "refs/handoff"), before);
});

test("a partial clone: an object truly gone (written here, never on the remote) is still reported", () => {
  const clone = partialClone();
  assert.is(cli(["task", "add", "local only", "--id", "t3"], { cwd: clone, agent: "bob" }).code, 0);
  const tip = gitOut(clone, "rev-parse", "refs/handoff/tasks/t3");
  const tree = gitOut(clone, "rev-parse", `${tip}^{tree}`);
  rmSync(join(clone, ".git/objects", tree.slice(0, 2), tree.slice(2)));
  const d = cli(["doctor"], { cwd: clone, agent: "bob" });
  assert.match(d.stdout + d.stderr, /missing objects/);
  assert.match(d.stdout + d.stderr, /t3/);
});

test.run();
