// Writes while `git gc` runs in a loop with git's default prune expiry: nothing is lost. (The same
// under --prune=now is in prune-loop.test.ts.)
import { test } from "uvu";
import * as assert from "uvu/assert";
import { gitCode, writesUnderGc } from "./support/gc-loop.ts";
import { cleanupTemp, cli, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

test("the same writes under git gc's default prune expiry lose nothing", async () => {
  const repo = tempRepo();
  const ids = await writesUnderGc(repo, []);
  for (const id of ids) assert.is(gitCode(repo, "cat-file", "-e", `refs/handoff/tasks/${id}:task.json`).status, 0, id);
  assert.is(cli(["doctor", "--json"], { cwd: repo }).json.checks.find((c: any) => c.name === "objects").status, "ok");
  assert.is(gitCode(repo, "fsck", "--no-dangling", "--connectivity-only").status, 0);
});

test.run();
