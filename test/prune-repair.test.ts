// Prunes: objects a ref needs can vanish under a concurrent `git gc --prune=now`. Writes check
// their objects after each ref update and write back what vanished; doctor finds refs that still
// point at missing objects, doctor --repair restores them from the remote or removes them (logged
// in the repair log), after which the user's git gc, fsck and fetch work; cancel --force removes
// one corrupt task. (The gc loops during writes are in prune-loop.test.ts.)
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { gitCode } from "./support/gc-loop.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { cloneOf, serveRoot } from "./support/servers.ts";

test.after(cleanupTemp);

/** Deletes one loose object, as a prune would. */
function prune(repo: string, oid: string): void {
  rmSync(`${repo}/.git/objects/${oid.slice(0, 2)}/${oid.slice(2)}`);
}

function project() {
  const bare = serveRoot().bare("project");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  return { bare, a: cloneOf(bare) };
}

test("doctor finds refs pointing at missing objects; --repair restores from the remote or removes and logs; git works again", () => {
  const { bare, a } = project();
  assert.is(cli(["task", "add", "pushed", "--id", "pushed", "--push"], { cwd: a, agent: "lead" }).code, 0);
  assert.is(cli(["task", "add", "local only", "--id", "local"], { cwd: a, agent: "lead" }).code, 0);
  const pushedBlob = gitOut(a, "rev-parse", "refs/handoff/tasks/pushed:task.json");
  const localCommit = gitOut(a, "rev-parse", "refs/handoff/tasks/local");
  prune(a, pushedBlob);
  prune(a, localCommit);
  assert.is.not(gitCode(a, "gc", "-q").status, 0, "a ref at a missing object breaks the user's git gc");

  const shown = cli(["task", "show", "pushed", "--json"], { cwd: a });
  assert.is(shown.code, 2);
  assert.is(shown.json.error.code, "corrupt_state");
  assert.match(shown.json.error.message, /is missing or unreadable \(repair: git handoff doctor --repair\)/);

  const d = cli(["doctor", "--json"], { cwd: a });
  assert.is(d.code, 2);
  const found = d.json.checks.find((c: any) => c.name === "objects");
  assert.is(found.status, "fail");
  assert.match(found.detail, /refs\/handoff\/tasks\/pushed/);
  assert.match(found.detail, /refs\/handoff\/tasks\/local/);

  const fixed = cli(["doctor", "--repair", "--json"], { cwd: a });
  const objects = fixed.json.checks.find((c: any) => c.name === "objects");
  assert.is(objects.status, "ok", objects.detail);
  assert.match(objects.detail, /2 restored, 1 removed/, objects.detail);
  // Restored from the remote, exactly its copy; the never-pushed one is gone, and logged.
  assert.is(gitOut(a, "rev-parse", "refs/handoff/tasks/pushed"), gitOut(bare, "rev-parse", "refs/handoff/tasks/pushed"));
  assert.is(cli(["task", "show", "pushed"], { cwd: a }).code, 0);
  assert.is(gitCode(a, "rev-parse", "--verify", "-q", "refs/handoff/tasks/local").status, 1);
  const log = gitOut(a, "log", "--format=%B", "refs/handoff-local/repair-log");
  assert.match(log, new RegExp(localCommit));
  assert.match(log, /refs\/handoff\/tasks\/pushed/);

  assert.is(gitCode(a, "fsck", "--no-dangling").status, 0, gitCode(a, "fsck").stderr);
  assert.is(gitCode(a, "gc", "-q").status, 0);
  assert.is(gitCode(a, "fetch", "-q", "origin").status, 0);
  assert.is(cli(["doctor", "--json"], { cwd: a }).json.checks.find((c: any) => c.name === "objects").status, "ok");
});

test("doctor tells an object git cannot read (a hand-made tree) from a missing one; --repair removes the ref (logged)", () => {
  const a = tempRepo();
  assert.is(cli(["task", "add", "fine", "--id", "fine"], { cwd: a, agent: "lead" }).code, 0);
  // A tree cut short, under a commit of its own, set as a task's ref: git itself cannot walk it.
  const made = (type: string, input: string) => spawnSync("git", ["hash-object", "--literally", "-w", "-t", type, "--stdin"], { cwd: a, input, encoding: "utf8" }).stdout.trim();
  const tree = made("tree", "100644 task.json\0abc");
  const commit = made("commit", `tree ${tree}\nauthor t <t@t> 1 +0000\ncommitter t <t@t> 1 +0000\n\nhand-made\n`);
  gitOut(a, "update-ref", "refs/handoff/tasks/handmade", commit);

  const d = cli(["doctor", "--json"], { cwd: a });
  const found = d.json.checks.find((c: any) => c.name === "objects");
  assert.is(found.status, "fail");
  assert.match(found.detail, /1 ref\(s\) point at objects git cannot read \(made by hand, or damaged on disk\)/);
  assert.match(found.detail, /refs\/handoff\/tasks\/handmade \(an object git cannot read: too-short tree object\)/);
  assert.not.match(found.detail, /missing/, "nothing is missing");

  const fixed = cli(["doctor", "--repair", "--json"], { cwd: a });
  const objects = fixed.json.checks.find((c: any) => c.name === "objects");
  assert.is(objects.status, "ok", objects.detail);
  assert.match(objects.detail, /0 restored, 1 removed/, objects.detail);
  assert.is(gitCode(a, "rev-parse", "--verify", "-q", "refs/handoff/tasks/handmade").status, 1);
  assert.match(gitOut(a, "log", "-1", "--format=%B", "refs/handoff-local/repair-log"), /an object git cannot read: too-short tree object/);
  assert.is(cli(["task", "show", "fine"], { cwd: a }).code, 0);
});

test("cancel --force removes a corrupt task (logged); on a readable task it is a plain cancel", () => {
  const a = tempRepo();
  assert.is(cli(["task", "add", "broken", "--id", "broken"], { cwd: a, agent: "lead" }).code, 0);
  assert.is(cli(["task", "add", "fine", "--id", "fine"], { cwd: a, agent: "lead" }).code, 0);
  const tip = gitOut(a, "rev-parse", "refs/handoff/tasks/broken");
  prune(a, gitOut(a, "rev-parse", "refs/handoff/tasks/broken:task.json"));
  assert.is(cli(["cancel", "broken", "--reason", "x"], { cwd: a, agent: "lead" }).code, 2, "without --force: refused");
  const r = cli(["cancel", "broken", "--force", "--reason", "objects pruned", "--json"], { cwd: a, agent: "lead" });
  assert.is(r.code, 0, r.stderr);
  assert.is(r.json.removed, tip);
  assert.is(gitCode(a, "rev-parse", "--verify", "-q", "refs/handoff/tasks/broken").status, 1);
  assert.match(gitOut(a, "log", "-1", "--format=%B", "refs/handoff-local/repair-log"), /objects pruned/);
  const plain = cli(["cancel", "fine", "--force", "--reason", "not needed", "--json"], { cwd: a, agent: "lead" });
  assert.is(plain.code, 0, plain.stderr);
  assert.is(plain.json.status, "cancelled");
  assert.is(gitCode(a, "fsck", "--no-dangling").status, 0);
});

test("task refs no verb can read (a blob, another task's commit): doctor names both and a fix that works, the refusal says it too", () => {
  const a = tempRepo();
  assert.is(cli(["task", "add", "other", "--id", "other"], { cwd: a, agent: "lead" }).code, 0);
  const blob = spawnSync("git", ["hash-object", "-w", "--stdin"], { cwd: a, input: "junk", encoding: "utf8" }).stdout.trim();
  gitOut(a, "update-ref", "refs/handoff/tasks/blob", blob);
  gitOut(a, "update-ref", "refs/handoff/tasks/copy", gitOut(a, "rev-parse", "refs/handoff/tasks/other"));
  const d = cli(["doctor", "--json"], { cwd: a });
  const check = d.json.checks.find((c: { name: string }) => c.name === "corrupt tasks");
  assert.ok(check, JSON.stringify(d.json.checks));
  assert.is(check.status, "fail");
  assert.match(check.detail, /2 task ref\(s\) no command can read/);
  assert.match(check.detail, /refs\/handoff\/tasks\/copy is corrupt: it holds task "other"/);
  assert.match(check.fix, /git handoff cancel (blob|copy) --force --reason TEXT/);
  assert.is(d.json.checks.find((c: { name: string }) => c.name === "invariants").status, "ok", "the readable task is fine");
  for (const id of ["blob", "copy"]) {
    const refused = cli(["cancel", id, "--reason", "x", "--json"], { cwd: a, agent: "lead" });
    assert.is(refused.code, 2, refused.stderr);
    assert.match(refused.json.error.suggestions[0].detail, `git handoff cancel ${id} --force --reason TEXT`);
    assert.is(cli(["cancel", id, "--force", "--reason", "corrupt"], { cwd: a, agent: "lead" }).code, 0);
  }
  assert.not.ok(cli(["doctor", "--json"], { cwd: a }).json.checks.some((c: { name: string }) => c.name === "corrupt tasks"));
  assert.is(cli(["task", "show", "other", "--json"], { cwd: a }).json.status, "todo", "the task whose commit was copied is untouched");
});

test.run();
