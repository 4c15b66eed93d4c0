// A deny or warn answer's catch record is written by a detached process after the answer: the
// hook exits without waiting for it, the record arrives shortly after, and the pending file goes.
// HANDOFF_HOOK_CATCH_WAIT=1 (the test switch) makes the hook wait, so `stats` is exact at once.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, tempRepo } from "./support/repo.ts";
import { caughtEvents as logEvents, edit, pendingCatches as pending, until } from "./support/catch-writes.ts";

test.after(cleanupTemp);

test("the catch record of a denial arrives after the answer, from a detached writer", async () => {
  const repo = tempRepo();
  assert.is(cli(["lease", "src/api/**", "--exclusive"], { cwd: repo, agent: "alice" }).code, 0);
  const r = cli(["hook", "claude-pre-tool-use"], { cwd: repo, agent: "bob", input: edit(repo, "src/api/a.ts") });
  assert.is(r.code, 0, r.stderr);
  assert.is(r.json.hookSpecificOutput.permissionDecision, "deny");
  await until("the detached writer records the denial", () => logEvents(repo) === 1 && pending(repo).length === 0);
  const stats = cli(["stats", "--json"], { cwd: repo, agent: "bob" });
  assert.is(stats.json.hooks.deny, 1);
});

test("with the test switch the hook waits for the writer: stats are exact right after it", () => {
  const repo = tempRepo();
  assert.is(cli(["lease", "src/shared.ts"], { cwd: repo, agent: "alice" }).code, 0);
  const env = { HANDOFF_HOOK_CATCH_WAIT: "1" };
  for (const file of ["src/shared.ts", "src/shared.ts"]) {
    const r = cli(["hook", "claude-pre-tool-use"], { cwd: repo, agent: "bob", input: edit(repo, file), env });
    assert.match(r.json.hookSpecificOutput.additionalContext, /warn: src\/shared\.ts is leased by alice/);
  }
  assert.is(logEvents(repo), 2);
  assert.equal(pending(repo), []);
  assert.is(cli(["stats", "--json"], { cwd: repo, agent: "bob" }).json.hooks.warn, 2);
});

test.run();
