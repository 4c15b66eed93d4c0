// A worker makes the next task's worktree while it idles (a worktree made ahead, at the commit a
// task without its own base starts from), so the claim is followed by the command at once. Each
// worktree serves one task only, every task still runs on a checkout of its base, and a stopped
// worker leaves no worktree and no folder behind. Real processes, one remote over smart HTTP.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cli, gitOut, tempDir } from "./support/repo.ts";
import { remoteForFile, POLL, remoteTask, script, start, stop, until } from "./support/handover.ts";

const net = remoteForFile(test, "spare");

test("two tasks in a row: each in its own worktree at its base, the first made ahead; nothing left once the worker stops", async () => {
  const a = net.clone("m1");
  // Something to check out: two files on main, which both clones have.
  writeFileSync(join(a, "README"), "read me\n");
  mkdirSync(join(a, "src"));
  writeFileSync(join(a, "src", "main.c"), "int main(void) { return 0; }\n");
  gitOut(a, "add", "-A");
  gitOut(a, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "files");
  gitOut(a, "push", "-q", "origin", "HEAD:main");
  const b = net.clone("m2");
  const tmp = tempDir("handoff-spare-tmp-");
  const log = join(tempDir("handoff-spare-log-"), "where");
  // The command says where it ran, at which commit, and whether the checkout is clean and whole.
  const job = script(`{ pwd; git rev-parse HEAD; git status --porcelain | wc -l; ls; } >> ${log}; echo ran`);
  const w = start(["worker", "--exec", job, "--poll", POLL], { cwd: b, agent: "codex@m2", env: { TMPDIR: tmp } });
  let first = "";
  try {
    await until(() => /taking tasks/.test(w.stderr()), "the worker started");
    // The spare is made in the background: wait until it exists, so the first task surely takes it.
    await until(() => readdirSync(tmp).some((n) => n.startsWith("handoff-next-")), "a worktree made ahead");
    const head = gitOut(a, "rev-parse", "HEAD");
    const files = gitOut(a, "ls-tree", "--name-only", "HEAD").split("\n");
    const runs: string[][] = [];
    for (const objective of ["first", "second"]) {
      const waited = start(["wait", "--objective", objective, "--timeout", "60s", "--json"], { cwd: a, agent: "alice" });
      assert.is(await waited.exited, 0, waited.stderr() + w.stderr());
      const out = JSON.parse(waited.stdout());
      assert.is(out.status, "done");
      assert.is(remoteTask(net.bare, out.id).status, "done");
    }
    const lines = readFileSync(log, "utf8").trim().split("\n");
    // Each run: pwd, HEAD, count of dirty paths, then the listing of the checkout.
    for (let i = 0, start_ = 0; i < 2; i++) {
      const end = lines.findIndex((l, j) => j > start_ && l.startsWith(tmp));
      const run = lines.slice(start_, end === -1 ? lines.length : end);
      runs.push(run);
      start_ = end;
    }
    const [one, two] = runs as [string[], string[]];
    first = one[0]!;
    assert.match(first, /handoff-next-/, "the first task ran in the worktree made ahead");
    assert.is.not(one[0], two[0], "no worktree serves two tasks");
    for (const run of [one, two]) {
      assert.is(run[1], head, "at the task's base");
      assert.is(run[2]!.trim(), "0", "a clean checkout");
      assert.equal(run.slice(3).sort(), [...files].sort(), "the whole tree checked out");
    }
  } finally {
    await stop(w);
  }
  assert.equal(gitOut(b, "worktree", "list", "--porcelain").split("\n").filter((l) => l.startsWith("worktree ")).length, 1, "only the clone's own worktree is left");
  assert.equal(readdirSync(tmp).filter((n) => n.startsWith("handoff-")), [], "no task folder and no spare left behind");
  assert.not.ok(existsSync(first));
});

test("a --once worker whose task is waiting when it starts leaves no worktree made ahead behind", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const tmp = tempDir("handoff-spare-once-");
  for (const id of ["o1", "o2", "o3"]) {
    // The task is there before the worker: its claim comes before any worktree made ahead is ready.
    assert.is(cli(["task", "add", `job ${id}`, "--id", id, "--push"], { cwd: a, agent: "lead" }).code, 0);
    const w = start(["worker", "--exec", script("echo ran"), "--once", "--poll", POLL], { cwd: b, agent: "codex@m2", env: { TMPDIR: tmp } });
    assert.is(await w.exited, 0, w.stderr());
    assert.is(remoteTask(net.bare, id).status, "done");
    assert.equal(gitOut(b, "worktree", "list", "--porcelain").split("\n").filter((l) => l.startsWith("worktree ")).length, 1, `after ${id}: only the clone's own worktree`);
    assert.equal(readdirSync(tmp).filter((n) => n.startsWith("handoff-")), [], `after ${id}: no folder left`);
  }
});

test.run();
