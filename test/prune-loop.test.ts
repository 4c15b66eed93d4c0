// Writes while `git gc` runs in a loop: under --prune=now (unsafe with concurrent writers, as git
// documents) writes restore what vanished before and right after their ref update, and doctor
// --repair mends what a prune still broke. (Default expiry: prune-default.test.ts.)
import { test } from "uvu";
import * as assert from "uvu/assert";
import { gitCode, writesUnderGc } from "./support/gc-loop.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

test("300 writes under git gc --prune=now every 200 ms: doctor --repair leaves nothing missing, fsck and gc clean", async () => {
  const repo = tempRepo();
  const ids = await writesUnderGc(repo, ["--prune=now"]);
  assert.is(ids.length, 300);
  const d = cli(["doctor", "--json"], { cwd: repo });
  const before = d.json.checks.find((c: any) => c.name === "objects");
  const fixed = cli(["doctor", "--repair", "--json"], { cwd: repo }).json.checks.find((c: any) => c.name === "objects");
  assert.is(fixed.status, "ok", fixed.detail);
  const fsck = gitCode(repo, "fsck", "--no-dangling", "--connectivity-only");
  assert.is(fsck.status, 0, fsck.stderr);
  const gc = gitCode(repo, "gc", "-q");
  assert.is(gc.status, 0, gc.stderr);
  const left = gitOut(repo, "for-each-ref", "--format=%(refname)", "refs/handoff/tasks/").split("\n").filter(Boolean).length;
  process.stdout.write(`\n  prune loop: ${before.status === "ok" ? "no ref broken" : before.detail.split(":")[0]}; ${left} of 300 tasks intact after repair\n`);
});

test.run();
