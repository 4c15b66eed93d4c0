// fence-check (the pre-push check) on a task nobody holds says what can be done about it: claim
// it again while it can be claimed; for finished work, that there is nothing to push for it.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

test("fence-check on a done, cancelled or in-review task never suggests claiming it again", () => {
  const repo = tempRepo();
  const ok = (agent: string, ...args: string[]) => assert.is(cli(args, { cwd: repo, agent }).code, 0, args.join(" "));
  for (const id of ["d", "c", "r", "t"]) ok("lead", "task", "add", id, "--id", id, ...(id === "r" ? ["--verify", "true"] : []));
  ok("alice", "claim", "d");
  ok("alice", "done", "d", "--no-verify");
  ok("alice", "claim", "r");
  ok("alice", "done", "r");
  ok("lead", "cancel", "c", "--reason", "not needed");
  const check = (id: string) => cli(["fence-check", id, "--fence", "1"], { cwd: repo, agent: "alice" });

  const done = check("d");
  assert.is(done.code, 3);
  assert.match(done.stderr, /does not hold task d: nobody holds it \(status done\)/);
  assert.match(done.stderr, /work_elsewhere: task d is done: its work is finished, there is nothing to push for it/);
  assert.not.match(done.stderr, /claim it again/);
  assert.match(check("c").stderr, /task c is cancelled: its work is finished, there is nothing to push for it/);
  const review = check("r").stderr;
  assert.match(review, /wait: task r awaits review/);
  assert.not.match(review, /claim it again/);
  // A task that can still be claimed: claim it first.
  assert.match(check("t").stderr, /retry: claim it again before pushing: git handoff claim t/);
});

test.run();
