// What `loop run` refuses to merge, and how it says so: a unit whose work would conflict, a failing
// verification, a dirty checked-out integration worktree, an agent that quits with work undone.
// Each time the integration branch is untouched (nothing half-merged) and the unit's work is kept.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, handoffRefs } from "./support/repo.ts";
import { linkedWorktrees, loopRepo, taskStatus } from "./support/loop.ts";

test.after(cleanupTemp);

/** Two units with disjoint scopes whose agents both rewrite README.md: the second conflicts. */
const CLASH = [
  { id: "left", objective: "write left.txt; write README.md from the left", scope: ["left.txt"] },
  { id: "right", objective: "write right.txt; write README.md from the right", scope: ["right.txt"] },
];

/** Nothing of a merge in progress anywhere: no MERGE_HEAD, no rebase folder, a clean main worktree. */
function noHalfMerge(repo: string): void {
  const gitDir = gitOut(repo, "rev-parse", "--git-common-dir");
  const abs = gitDir.startsWith("/") ? gitDir : join(repo, gitDir);
  for (const f of ["MERGE_HEAD", "rebase-merge", "rebase-apply", "CHERRY_PICK_HEAD"]) assert.not.ok(existsSync(join(abs, f)), f);
  assert.is(gitOut(repo, "status", "--porcelain"), "");
}

for (const strategy of ["merge", "rebase"]) {
  test(`${strategy}: a unit whose work conflicts is refused and reported; main holds only the first unit; its branch and worktree are kept`, async () => {
    const l = await loopRepo(CLASH);
    const r = cli(["loop", "run", "--agent-cmd", l.agent, "--merge", strategy, "--poll", "100ms", "--json"], { cwd: l.repo, agent: "lead", env: l.env });
    assert.is(r.code, 3, r.stderr);
    const [u1, u2] = r.json.units;
    assert.is(u1.phase, "merged");
    assert.is(u2.phase, "conflict");
    assert.match(u2.note, "would conflict with main in README.md");
    assert.match(u2.note, `the work of right is only on ${u2.branch}: merge it by hand`);
    assert.match(r.stderr, "u2: refused: would conflict with main in README.md; main untouched");
    // main is exactly u1's merge, and the checked-out worktree shows it, clean.
    assert.is(gitOut(l.repo, "rev-parse", "main"), u1.result);
    assert.is(gitOut(l.repo, "rev-parse", "HEAD"), u1.result);
    assert.is(readFileSync(join(l.repo, "README.md"), "utf8"), "from the left\n");
    assert.not.ok(existsSync(join(l.repo, "right.txt")));
    noHalfMerge(l.repo);
    // The refused unit's work is all there for a person to resolve.
    assert.is(gitOut(l.repo, "show", `${u2.branch}:README.md`), "from the right");
    assert.equal(linkedWorktrees(l.repo), [u2.worktree]);
    assert.is(u2.kept, true);
    // Its tasks are done (the work exists); only the merge was refused.
    assert.is(taskStatus(l.repo, "right"), "done");
    assert.match(cli(["loop", "status"], { cwd: l.repo }).stdout, "u2 conflict: right");
  });
}

test("--verify failing keeps the unit unmerged (its branch and worktree kept); a passing unit merges", async () => {
  const l = await loopRepo([
    { id: "good", objective: "write good.txt", scope: ["good.txt"] },
    { id: "bad", objective: "write bad.txt; write broken.flag", scope: ["bad.txt"] },
  ]);
  const main0 = gitOut(l.repo, "rev-parse", "main");
  const r = cli(["loop", "run", "--agent-cmd", l.agent, "--verify", "test ! -f broken.flag || { echo 'broken.flag is there'; exit 4; }", "--poll", "100ms", "--json"], { cwd: l.repo, agent: "lead", env: l.env });
  assert.is(r.code, 3, r.stderr);
  const [good, bad] = r.json.units;
  assert.is(good.phase, "merged");
  assert.is(bad.phase, "unverified");
  assert.match(bad.note, "verification failed (exited 4): not merged");
  assert.match(bad.note, "broken.flag is there");
  assert.is(gitOut(l.repo, "rev-parse", "main"), good.result);
  assert.is(gitOut(l.repo, "rev-parse", `${good.result}^1`), main0);
  assert.not.ok(existsSync(join(l.repo, "bad.txt")));
  assert.ok(existsSync(join(bad.worktree, "bad.txt")));
  assert.is(gitOut(l.repo, "show", `${bad.branch}:bad.txt`), "bad by " + bad.agent);
  noHalfMerge(l.repo);
});

test("a checked-out integration worktree with uncommitted changes: the merge is refused, the change is untouched", async () => {
  const l = await loopRepo([{ id: "feature", objective: "write feature.txt", scope: ["feature.txt"] }]);
  writeFileSync(join(l.repo, "README.md"), "my own edit, not committed\n");
  const main0 = gitOut(l.repo, "rev-parse", "main");
  const r = cli(["loop", "run", "--agent-cmd", l.agent, "--poll", "100ms", "--json"], { cwd: l.repo, agent: "lead", env: l.env });
  assert.is(r.code, 3, r.stderr);
  const [u] = r.json.units;
  assert.is(u.phase, "refused");
  assert.match(u.note, `main is checked out in ${l.repo}, which has uncommitted changes (README.md)`);
  assert.is(gitOut(l.repo, "rev-parse", "main"), main0);
  assert.is(readFileSync(join(l.repo, "README.md"), "utf8"), "my own edit, not committed\n");
  assert.is(gitOut(l.repo, "show", `${u.branch}:feature.txt`), `feature by ${u.agent}`);
  // The note's advice is true: loop run does not take a finished unit again, the command it names merges it.
  assert.not.match(u.note, "run loop run again");
  assert.match(u.note, `commit or stash them first; the work of feature is only on ${u.branch}: merge it by hand into main (git merge ${u.branch})`);
  gitOut(l.repo, "stash", "-q");
  gitOut(l.repo, "merge", "-q", "--no-edit", u.branch);
  assert.is(readFileSync(join(l.repo, "feature.txt"), "utf8"), `feature by ${u.agent}\n`);
});

test("an agent that ends with a task undone: the unit fails, its claims are released, the work so far is kept", async () => {
  const l = await loopRepo([
    { id: "first", objective: "write one.txt", scope: ["one.txt"] },
    { id: "second", objective: "write two.txt; quit", scope: ["two.txt"], after: "first" },
  ]);
  const r = cli(["loop", "run", "--agent-cmd", l.agent, "--poll", "100ms", "--json"], { cwd: l.repo, agent: "lead", env: l.env });
  assert.is(r.code, 3, r.stderr);
  const [u] = r.json.units;
  assert.is(u.phase, "failed");
  assert.match(u.note, "the agent ended (exit 0) with second is claimed; released second");
  assert.is(taskStatus(l.repo, "first"), "done");
  assert.is(taskStatus(l.repo, "second"), "todo");
  assert.is(gitOut(l.repo, "show", `${u.branch}:one.txt`), `first by ${u.agent}`);
  assert.ok(existsSync(join(u.worktree, "two.txt")), "the uncommitted work stays in the worktree");
  // Kept, and the note says where and how to remove them once looked at.
  assert.match(u.note, `kept ${u.branch} (it has commits) and ${u.worktree} (when done with them: git worktree remove --force ${u.worktree} && git branch -D ${u.branch})`);
  assert.is(u.kept, true);
  assert.match(cli(["loop", "status"], { cwd: l.repo }).stdout, `${u.branch}, worktree ${u.worktree}`);
});

test("an agent that fails before committing anything: its worktree and branch are removed, loop status says why it ended", async () => {
  const l = await loopRepo([{ id: "x", objective: "write x.txt", scope: ["x.txt"] }]);
  // What a client that cannot start says on its way out; an escape sequence in it stays visible.
  const agent = "printf 'starting\\nmodel unreachable: \\033[31mred\\n' >&2; exit 3";
  const r = cli(["loop", "run", "--agent-cmd", agent, "--poll", "100ms", "--json"], { cwd: l.repo, agent: "lead", env: l.env });
  assert.is(r.code, 3, r.stderr);
  const [u] = r.json.units;
  const log = join(dirname(u.worktree), "agent.log");
  assert.equal([u.phase, u.kept], ["failed", false]);
  assert.is(u.note, `the agent ended (exit 3) with x is claimed; released x; its last output: "model unreachable: \\u001b[31mred"; nothing was committed: its worktree and branch were removed; its output is in ${log}`);
  assert.equal(linkedWorktrees(l.repo), []);
  assert.is(gitOut(l.repo, "branch", "--list", "loop/*"), "");
  assert.not.ok(existsSync(u.worktree));
  assert.is(readFileSync(log, "utf8"), "starting\nmodel unreachable: \u001b[31mred\n");
  assert.is(taskStatus(l.repo, "x"), "todo");
  const status = cli(["loop", "status"], { cwd: l.repo }).stdout;
  assert.match(status, `u1 failed: x  (${u.agent})\n`);
  assert.match(status, 'its last output: "model unreachable: \\u001b[31mred"');
  assert.not.match(status, "\u001b");
  assert.not.match(status, u.branch);
});

test("an option-like value for a text option (--agent-cmd --keep, --verify --json): one line, exit 2, nothing written", async () => {
  const l = await loopRepo([{ id: "a1", objective: "write a1.txt", scope: ["a1.txt"] }]);
  const refs = handoffRefs(l.repo, { logs: true });
  for (const [args, flag] of [
    [["--agent-cmd", "--keep"], "--agent-cmd"],
    [["--verify", "--json", "--agent-cmd", "true"], "--verify"],
    [["--agent-cmd", "true", "--verify", "-rf"], "--verify"],
  ] as const) {
    const r = cli(["loop", "run", ...args, "--poll", "100ms"], { cwd: l.repo, agent: "lead", env: l.env });
    assert.is(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.is(r.stderr.trim().split("\n").length, 1, r.stderr);
    const value = (args as readonly string[])[(args as readonly string[]).indexOf(flag) + 1]!;
    // One of the command's own options is refused before the loop reads it (program-builder.ts); other option-like text by the loop.
    assert.ok(r.stderr.includes(`${flag} needs a value, got the option ${value}`) || r.stderr.includes(`${flag} needs a value, got "${value}", which looks like an option`), r.stderr);
  }
  assert.is(handoffRefs(l.repo, { logs: true }), refs, "no ref written");
  assert.equal(linkedWorktrees(l.repo), []);
  assert.is(gitOut(l.repo, "branch", "--list", "loop/*"), "");
  assert.not.ok(existsSync(join(l.dir, "starts")), "no agent started");
});

test.run();
