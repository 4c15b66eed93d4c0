// The worker when things go wrong: a remote that cannot take a result yet, a command that prints
// megabytes, hand-made results and inputs refs pushed over a handover. Real processes, one remote
// over smart HTTP (its own, so these run beside handover-worker.test.ts).
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanEnv, cli, gitOut, handoffRefs, seedTasks, tempDir, tempRepo } from "./support/repo.ts";
import { HandoffError } from "../src/core/errors.ts";
import { POLL, remoteForFile, remoteTask, script, sh, start, stop, until } from "./support/handover.ts";

const net = remoteForFile(test, "worker-faults");

const remoteResult = (id: string) => JSON.parse(gitOut(net.bare, "show", `refs/handoff/results/${id}:result.json`));

test("a command that prints megabytes: the output is its tail, and the cut says how much went", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const w = start(["worker", "--exec", script(`head -c 3000000 /dev/zero | tr '\\0' x; echo; echo the end`), "--once", "--poll", POLL], { cwd: b, agent: "codex@m2" });
  const waited = start(["wait", "--objective", "talk a lot", "--timeout", "60s", "--json"], { cwd: a, agent: "alice" });
  assert.is(await waited.exited, 0, waited.stderr());
  const out = JSON.parse(waited.stdout());
  const { MAX_OUTPUT_BYTES } = await import("../src/core/task-files.ts");
  const cut = Number(/^\[\.\.\. (\d+) bytes of output cut \.\.\.\]\n/.exec(out.output)?.[1]);
  assert.is(cut, 3_000_000 + "\nthe end\n".length - MAX_OUTPUT_BYTES, "everything printed but the tail kept");
  assert.is(remoteResult(out.id).output_cut, cut);
  assert.ok(out.output.endsWith("x\nthe end\n"));
  await w.exited;
});

test("a result the remote cannot take yet is sent again, not thrown away: the task runs once and its waiter gets the output", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const runs = join(b, "runs");
  // The command takes the remote away as it ends, and puts it back 3 s later: the completion's
  // push fails, and keeps failing for a few tries.
  const away = `${net.bare}.away`;
  const job = script(`echo run >> "${runs}"; mv "${net.bare}" "${away}"; (sleep 3; mv "${away}" "${net.bare}") >/dev/null 2>&1 & echo "the answer"; echo kept > "$HANDOFF_OUT_DIR/f.txt"`);
  const w = start(["worker", "--exec", job, "--once", "--poll", POLL, "--ttl", "2m"], { cwd: b, agent: "codex@m2" });
  const waited = start(["wait", "--objective", "answer once", "--timeout", "90s", "--json"], { cwd: a, agent: "alice" });
  assert.is(await waited.exited, 0, waited.stderr() + w.stderr());
  const out = JSON.parse(waited.stdout());
  assert.equal([out.status, out.output.trim(), out.files.map((f: { name: string }) => f.name)], ["done", "the answer", ["f.txt"]]);
  assert.is(await w.exited, 0, w.stderr());
  assert.match(w.stderr(), /the result is not sent yet \(.*\); trying again in \d+s/);
  assert.is(readFileSync(runs, "utf8"), "run\n", "the command ran once");
  assert.is(remoteTask(net.bare, out.id).status, "done");
});

test("a completion whose report is lost and whose remote cannot be read back for a while: sent again, found landed, counted done once", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const runs = join(b, "runs");
  // The remote commits the completion (the results ref among its updates), then goes away for 3 s
  // and its receive-pack dies before it reports: the push's outcome is unknown, and reading it back fails.
  const hook = join(net.bare, "hooks", "reference-transaction");
  writeFileSync(`${net.bare}/lose-results-report`, "");
  writeFileSync(hook, `#!/bin/sh
updates=$(cat)
if [ "$1" = committed ] && [ -f "$GIT_DIR/lose-results-report" ] && printf '%s\n' "$updates" | grep -q ' refs/handoff/results/'; then
  d=$(cd "$GIT_DIR" && pwd); rm -f "$d/lose-results-report"
  mv "$d" "$d.away"; (sleep 3; mv "$d.away" "$d") >/dev/null 2>&1 &
  kill -9 $PPID
fi
`);
  chmodSync(hook, 0o755);
  try {
    const w = start(["worker", "--exec", script(`echo run >> "${runs}"; echo "the answer"`), "--once", "--poll", POLL, "--ttl", "2m"], { cwd: b, agent: "codex@m2" });
    const waited = start(["wait", "--objective", "answer, report lost", "--timeout", "90s", "--json"], { cwd: a, agent: "alice" });
    assert.is(await waited.exited, 0, waited.stderr() + w.stderr());
    const out = JSON.parse(waited.stdout());
    assert.equal([out.status, out.output.trim()], ["done", "the answer"]);
    assert.is(await w.exited, 0, w.stderr());
    assert.not.ok(existsSync(`${net.bare}/lose-results-report`), "the report was lost once");
    assert.match(w.stderr(), /the result is not sent yet \(.*may or may not have landed.*\); trying again/);
    // The retry found the task final with this worker's own result: done, not a failure to set up.
    assert.match(w.stderr(), /worker stopped: 1 done, 0 failed, 0 cancelled, 0 released/);
    assert.is(readFileSync(runs, "utf8"), "run\n", "the command ran once");
  } finally {
    rmSync(hook, { force: true });
  }
});

test("a junk results ref pushed over a queued handover: the waiter cancels its task, a worker does not run a task whose result it could not send", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const junk = (id: string) => {
    const blob = sh("git", ["hash-object", "-w", "--stdin"], a, "junk");
    const tree = sh("git", ["mktree"], a, `100644 blob ${blob}\tresult.json\n`);
    gitOut(a, "push", "-q", "origin", `${gitOut(a, "commit-tree", tree, "-m", "x")}:refs/handoff/results/${id}`);
  };
  // The waiter's side.
  const waited = start(["wait", "--objective", "spoiled", "--timeout", "60s", "--json"], { cwd: a, agent: "alice" });
  await until(() => /created t-/.test(waited.stderr()), "the task created");
  const id = /created (t-[a-z0-9]+)/.exec(waited.stderr())![1]!;
  junk(id);
  assert.is(await waited.exited, 2, waited.stderr());
  assert.is(JSON.parse(waited.stdout()).error.code, "corrupt_state");
  assert.match(waited.stderr(), new RegExp(`${id}: cancelled \\(its results cannot be received\\)`));
  assert.is(remoteTask(net.bare, id).status, "cancelled", "no worker will run it");
  // The worker's side: a task queued without a waiter.
  assert.is(cli(["task", "add", "also spoiled", "--id", "sp2", "--push"], { cwd: a, agent: "lead" }).code, 0);
  junk("sp2");
  const runs = join(b, "runs");
  const w = start(["worker", "--exec", script(`echo run >> "${runs}"`), "--once", "--poll", POLL], { cwd: b, agent: "codex@m2" });
  assert.is(await w.exited, 0, w.stderr());
  assert.not.ok(existsSync(runs), "the command did not run");
  assert.match(w.stderr(), /sp2: refs\/handoff\/results\/sp2 on origin was refused on receive .*git handoff sync --repair refuses it: this clone has no value of its own.*; after checking the remote.s value, git handoff sync --repair --force deletes it/);
  assert.match(w.stderr(), /1 released/);
  assert.is(remoteTask(net.bare, "sp2").status, "todo", "given back");
  // Out of the way of the next tests' workers (one remote for the file).
  assert.is(cli(["cancel", "sp2", "--reason", "spoiled", "--push"], { cwd: a, agent: "lead" }).code, 0);
});

test("a worker's completion waits out the takeover grace of another agent's claim, as every task write does", async () => {
  const { openStore } = await import("../src/store/store.ts");
  const { claim } = await import("../src/store/task-actions.ts");
  const { finishWithResults } = await import("../src/work/complete.ts");
  const repo = tempRepo();
  await seedTasks(repo, [{ id: "g" }]);
  const t0 = Date.now();
  const at = (ms: number) => cleanEnv({ HANDOFF_NOW: new Date(t0 + ms).toISOString() });
  const cy = await openStore({ cwd: repo, agent: "cy", env: at(0) });
  await claim(cy, "g", { ttl: "1m" }).finally(() => cy.close());
  // 10 s past cy's expiry, inside the 60 s grace a sync remote sets (max_clock_skew plus the offset).
  const worker = await openStore({ cwd: repo, agent: "worker", env: at(70_000) });
  worker.takeoverGraceMs = 60_000;
  const record = { task: "g", status: "done", output: "ok\n", output_cut: 0, reason: null, exit_code: 0, files: [], refused: [], worker: "worker", machine: null, at: new Date(t0).toISOString() };
  const refs = handoffRefs(repo);
  try {
    const e = await finishWithResults(worker, record as never, new Map()).then(() => null, (x: unknown) => x);
    assert.ok(e instanceof HandoffError, `the completion went through: ${String(e)}`);
    assert.is((e as HandoffError).code, "held_by_other");
    assert.match((e as HandoffError).message, /held by cy: its lease expired .* but a takeover waits/);
  } finally {
    worker.close();
  }
  assert.is(handoffRefs(repo), refs, "nothing written");
});

test("hand-made inputs naming one file both as context and as a file: the command is not run", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  assert.is(cli(["task", "add", "clash", "--id", "clash"], { cwd: a, agent: "lead" }).code, 0);
  const blob = (text: string) => sh("git", ["hash-object", "-w", "--stdin"], a, text);
  const folder = (text: string) => sh("git", ["mktree"], a, `100644 blob ${blob(text)}\tnotes.md\n`);
  const record = { task: "clash", context: [{ name: "notes.md", size: 7 }], files: [{ name: "notes.md", size: 5 }] };
  const tree = sh("git", ["mktree"], a, `100644 blob ${blob("git-handoff 1\n")}\tformat\n100644 blob ${blob(JSON.stringify(record))}\tinputs.json\n040000 tree ${folder("context")}\tcontext\n040000 tree ${folder("files")}\tfiles\n`);
  const inputs = gitOut(a, "commit-tree", tree, "-m", "inputs");
  // The task's "created" step names those inputs (a worker reads only the inputs its task names),
  // as a creator's own hand-made task would.
  const created = gitOut(a, "cat-file", "commit", "refs/handoff/tasks/clash");
  const split = created.indexOf("\n\n");
  const event = JSON.parse(created.slice(split + 2).replace(/^[^\n]*\n\n/, ""));
  const named = sh("git", ["hash-object", "-t", "commit", "-w", "--stdin"], a, `${created.slice(0, split)}\n\ncreated clash\n\n${JSON.stringify({ ...event, inputs }, null, 2)}\n`);
  gitOut(a, "push", "-q", "origin", `${named}:refs/handoff/tasks/clash`, `${inputs}:refs/handoff/inputs/clash`);
  const runs = join(b, "runs");
  const w = start(["worker", "--exec", script(`echo run >> "${runs}"`), "--once", "--poll", POLL], { cwd: b, agent: "codex@m2" });
  assert.is(await w.exited, 0, w.stderr());
  assert.not.ok(existsSync(runs), "the command did not run");
  assert.match(w.stderr(), /clash: the task.s inputs name "notes\.md" both as context and as a file/, w.stderr());
});

test("a worker killed outright: the next one on the machine stops the command it left running and removes its folders and worktrees", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const tmp = tempDir("handoff-worker-tmp-");
  const env = { TMPDIR: tmp };
  const pidFile = join(b, "command.pid");
  assert.is(cli(["task", "add", "long one", "--id", "orphan", "--push"], { cwd: a, agent: "lead" }).code, 0);
  const w1 = start(["worker", "--exec", script(`echo $$ > "${pidFile}"; sleep 60`), "--poll", POLL], { cwd: b, agent: "codex@m2", env });
  await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"), "the command running");
  const commandPid = Number(readFileSync(pidFile, "utf8"));
  w1.child.kill("SIGKILL");
  await w1.exited;
  const left = () => readdirSync(tmp).filter((n) => n.startsWith("handoff-"));
  assert.ok(left().some((n) => n.startsWith("handoff-orphan-")), left().join(","));
  assert.ok(alive(commandPid), "the command outlives a SIGKILLed worker");
  // The next worker stops the command; the one after (the command gone) removes what was left.
  const w2 = start(["worker", "--exec", script("true"), "--poll", POLL], { cwd: b, agent: "codex@m2", env });
  await until(() => /stopped the command a stopped worker left running/.test(w2.stderr()), "the leftover command stopped");
  await until(() => !alive(commandPid), "the command gone");
  assert.is(await stop(w2), 130, w2.stderr());
  // The task's folder goes with the worker that finds the command gone: the same one, when it
  // looked at the folder after stopping the command in the spare worktree the task ran in.
  const w3 = start(["worker", "--exec", script("true"), "--poll", POLL], { cwd: b, agent: "codex@m2", env });
  // The sweep says what it removed once it is over, and the line reaches this process through a
  // pipe: it may come a moment after the folder is gone, so it is waited for too.
  const removedLine = /removed .*handoff-orphan-.*, left by a stopped worker/;
  await until(() => /taking tasks/.test(w3.stderr()) && !left().some((n) => n.startsWith("handoff-orphan-")) && removedLine.test(w2.stderr() + w3.stderr()), "the task folder removed, and said so");
  assert.match(w2.stderr() + w3.stderr(), removedLine);
  assert.is(await stop(w3), 130, w3.stderr());
  assert.equal(left(), [], "nothing of the killed worker is left");
  assert.is(gitOut(b, "worktree", "list", "--porcelain").split("\n").filter((l) => l.startsWith("worktree ")).length, 1, "only the clone's own worktree is registered");
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, "latin1").includes(") Z");
  } catch {
    return false;
  }
}

test.run();
