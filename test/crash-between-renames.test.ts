// A claim, done or release moves a task's ref and the lease ref in one transaction, but the two
// lock files are renamed into place one by one: a process killed between the renames (strace
// injects SIGKILL at the second rename) leaves one ref set and the other not. Whichever it is, a
// task lease must exist only while its task is held by that agent: no lease left turning others
// away for its whole TTL for a task nobody holds.
import { spawnSync } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, cleanEnv, cleanupTemp, cli, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

/** `git-handoff ARGS` killed at the second rename of the task's or the lease ref's lock file. */
function killedAtSecondRename(repo: string, id: string, args: string[], agent: string, writer = ""): void {
  const locks = [`${repo}/.git/refs/handoff/tasks/${id}.lock`, `${repo}/.git/refs/handoff/leases.lock`];
  const r = spawnSync(
    "strace",
    ["-f", "-qq", "-o", "/dev/null", ...locks.flatMap((l) => ["-P", l]), "-e", "trace=rename", "-e", "inject=rename:signal=KILL:when=2", process.execPath, CLI, ...args],
    { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: agent, HANDOFF_REF_WRITER: writer }), encoding: "utf8" },
  );
  if (r.error) throw new Error(`these tests need strace (.ci/run installs it): ${r.error.message}`);
  // With HANDOFF_REF_WRITER=git it is the `git update-ref` that is killed, and the command fails.
  if (writer === "git") assert.match(r.stderr, /update-ref/);
  else assert.is(r.signal ?? (r.status === 137 ? "SIGKILL" : r.status), "SIGKILL", `not killed: ${r.stderr}`);
}

type Lease = { agent: string; task: string | null; pattern: string };
/** Every task lease whose task is not held by the lease's agent, as "agent pattern task status". */
function orphanLeases(repo: string): string[] {
  const leases = cli(["leases", "--json"], { cwd: repo, agent: "lead" }).json as Lease[];
  return leases.flatMap((l) => {
    if (!l.task) return [];
    const t = cli(["task", "show", l.task, "--json"], { cwd: repo, agent: "lead" }).json;
    return t.status === "claimed" && t.claim?.agent === l.agent ? [] : [`${l.agent} ${l.pattern} ${l.task} ${t.status}`];
  });
}

function exclusiveTask(repo: string): void {
  assert.is(cli(["task", "add", "x", "--id", "a", "--scope", "src/**", "--exclusive"], { cwd: repo, agent: "lead" }).code, 0);
}

test("a claim killed between its two renames leaves no lease for a task nobody holds (written here, or by git)", () => {
  for (const writer of ["", "git"]) {
    const repo = tempRepo();
    exclusiveTask(repo);
    killedAtSecondRename(repo, "a", ["claim", "a"], "alice", writer);
    assert.equal(orphanLeases(repo), [], writer);
    // The task went first: held by alice, its lease to come with her next renewal.
    assert.is(cli(["task", "show", "a", "--json"], { cwd: repo, agent: "lead" }).json.claim?.agent, "alice", writer);
    assert.is(cli(["check", "src/x.ts"], { cwd: repo, agent: "bob" }).code, 0, writer);
  }
});

test("done and release killed between their two renames leave no lease behind the finished task", () => {
  for (const verb of [["done", "a", "--no-verify"], ["release", "a"]]) {
    const repo = tempRepo();
    exclusiveTask(repo);
    assert.is(cli(["claim", "a"], { cwd: repo, agent: "carol" }).code, 0);
    assert.is(cli(["check", "src/x.ts"], { cwd: repo, agent: "bob" }).code, 3);
    killedAtSecondRename(repo, "a", verb, "carol");
    assert.equal(orphanLeases(repo), [], verb[0]);
    // The lease went first: the task still carol's, as if the command had not run.
    assert.is(cli(["task", "show", "a", "--json"], { cwd: repo, agent: "lead" }).json.status, "claimed", verb[0]);
    assert.is(cli(["check", "src/x.ts"], { cwd: repo, agent: "bob" }).code, 0, verb[0]);
  }
});

test.run();
