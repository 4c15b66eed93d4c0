import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

test("a task goes from added to claimed to done, and git log tells the story", () => {
  const repo = tempRepo();
  const add = cli(["task", "add", "write", "the", "parser", "--id", "parser", "--priority", "5"], { cwd: repo, agent: "lead" });
  assert.is(add.code, 0, add.stderr);
  assert.is(add.stdout.trim(), "parser");

  const claim = cli(["claim", "parser", "--json"], { cwd: repo, agent: "alice" });
  assert.is(claim.code, 0, claim.stderr);
  assert.is(claim.json.status, "claimed");
  assert.is(claim.json.claim.agent, "alice");
  assert.is(claim.json.claim.fence, 1);

  const other = cli(["claim", "parser"], { cwd: repo, agent: "bob" });
  assert.is(other.code, 3);
  assert.match(other.stderr, /held by alice/);

  const done = cli(["done", "parser", "--commit", "HEAD", "--note", "parser merged", "--json"], { cwd: repo, agent: "alice" });
  assert.is(done.code, 0, done.stderr);
  assert.is(done.json.status, "done");
  assert.is(done.json.result.commit, gitOut(repo, "rev-parse", "HEAD"));

  const log = gitOut(repo, "log", "--format=%an %s", "refs/handoff/tasks/parser").split("\n");
  assert.equal(
    log.map((l) => l.split(" ").slice(0, 2).join(" ")),
    ["alice done", "alice claimed", "lead created"],
  );
});

test.run();
