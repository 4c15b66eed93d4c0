// Output that cannot be delivered: a reader that leaves before the command writes (EPIPE), and a
// stdout whose writes fail (/dev/full). The command keeps its own exit status (a refusal its code),
// a failed report of finished work is one line with the machine's status (5), never a stack trace.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, cleanEnv, cleanupTemp, cli, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

/** Runs `git-handoff args` in bash with its stdout sent to `to` (a shell redirection or a pipe into a reader that has already left). */
function shell(repo: string, args: string, to: "gone reader" | "/dev/full") {
  const cmd = `node ${JSON.stringify(CLI)} ${args}`;
  // The reader `true` exits at once; the command starts 0.3 s later, so its first write meets a closed pipe.
  const line = to === "gone reader" ? `set -o pipefail; (sleep 0.3; exec ${cmd}) | true` : `${cmd} > /dev/full`;
  return spawnSync("bash", ["-c", line], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: "alice" }), encoding: "utf8" });
}

const noTrace = (stderr: string) => assert.not.match(stderr, /\n\s+at |Node\.js v|node:internal/, stderr);

test("a reader that left: the command ends with its own status, quietly", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "one", "--id", "one"], { cwd: repo, agent: "lead" }).code, 0);
  const refused = shell(repo, "claim nosuch --json", "gone reader");
  assert.is(refused.status, 4, refused.stderr);
  assert.match(refused.stderr, /^git-handoff: no task nosuch \[not_found\]\n$/);
  const listed = shell(repo, "task list --json", "gone reader");
  assert.is(listed.status, 0, listed.stderr);
  assert.is(listed.stderr, "");
  // Written through the stdout stream (not write(2)): the same.
  const streamed = shell(repo, "completion bash", "gone reader");
  assert.is(streamed.status, 0, streamed.stderr);
  assert.is(streamed.stderr, "");
});

test("a full disk under stdout: finished work reported as exit 5 in one line, a refusal keeps its code", () => {
  assert.ok(existsSync("/dev/full"), "this test needs /dev/full");
  const repo = tempRepo();
  const added = shell(repo, "task add x --id full1", "/dev/full");
  assert.is(added.status, 5, added.stderr);
  noTrace(added.stderr);
  assert.match(added.stderr, /^git-handoff: the command ran, but its output could not be written: no space left on the device/);
  assert.is(added.stderr.split("\n").filter((l) => l.startsWith("git-handoff:")).length, 1, added.stderr);
  assert.is(cli(["task", "show", "full1", "--json"], { cwd: repo }).json.status, "todo", "the work itself was done");

  const refused = shell(repo, "claim nosuch --json", "/dev/full");
  assert.is(refused.status, 4, refused.stderr);
  noTrace(refused.stderr);
  assert.is(refused.stderr, "git-handoff: no task nosuch [not_found]\n");

  const streamed = shell(repo, "completion bash", "/dev/full");
  assert.is(streamed.status, 5, streamed.stderr);
  noTrace(streamed.stderr);
  assert.match(streamed.stderr, /^git-handoff: the output could not be written: ENOSPC/);
});

test.run();
