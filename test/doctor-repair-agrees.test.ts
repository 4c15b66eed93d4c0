// What doctor tells the user to run `git handoff doctor --repair` for, --repair fixes: doctor right
// after it passes that check, and no coordination ref changes but the ones the repair names. (The
// lease check's side of this is in doctor-lapsed-claims.test.ts.)
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const check = (repo: string, name: string, repair = false) => cli(["doctor", ...(repair ? ["--repair"] : []), "--json"], { cwd: repo }).json.checks.find((c: any) => c.name === name);
const refs = (repo: string) => gitOut(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/handoff/", "refs/handoff-remotes/", "refs/handoff-local/").split("\n").filter(Boolean);
const object = (repo: string, type: string, input: string) => spawnSync("git", ["hash-object", "--literally", "-w", "-t", type, "--stdin"], { cwd: repo, input, encoding: "utf8" }).stdout.trim();
const commitOf = (repo: string, tree: string, message: string) => object(repo, "commit", `tree ${tree}\nauthor t <t@t> 1 +0000\ncommitter t <t@t> 1 +0000\n\n${message}\n`);

test("a repair log at missing objects: doctor reports it, --repair removes it and starts the log again with that removal, doctor passes", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "kept", "--id", "kept"], { cwd: repo, agent: "lead" }).code, 0);
  const broken = commitOf(repo, "1".repeat(40), "a log whose tree was pruned");
  gitOut(repo, "update-ref", "refs/handoff-local/repair-log", broken);
  const before = refs(repo);

  const found = check(repo, "objects");
  assert.is(found.status, "fail");
  assert.match(found.detail, /refs\/handoff-local\/repair-log \(1 missing/);
  assert.match(found.fix, /^git handoff doctor --repair/);

  const repaired = check(repo, "objects", true);
  assert.is(repaired.status, "ok", repaired.detail);
  assert.is(check(repo, "objects").status, "ok");
  // Only the log changed: a new one whose first entry names the broken one it replaced.
  const after = refs(repo);
  assert.equal(after.filter((r) => !r.startsWith("refs/handoff-local/repair-log ")), before.filter((r) => !r.startsWith("refs/handoff-local/repair-log ")));
  const log = gitOut(repo, "log", "--format=%B", "refs/handoff-local/repair-log");
  assert.match(log, new RegExp(`"ref": "refs/handoff-local/repair-log",\\s*"was": "${broken}"`));
  assert.is(gitOut(repo, "rev-list", "--count", "refs/handoff-local/repair-log"), "1");
  assert.is(spawnSync("git", ["gc", "-q"], { cwd: repo }).status, 0);
});

test("a loop record at a missing object: doctor names --repair, which removes it (its own run says so), and doctor passes", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "kept", "--id", "kept"], { cwd: repo, agent: "lead" }).code, 0);
  const blob = object(repo, "blob", "{}\n");
  const tree = spawnSync("git", ["mktree"], { cwd: repo, input: `100644 blob ${blob}\tloop.json\n`, encoding: "utf8" }).stdout.trim();
  gitOut(repo, "update-ref", "refs/handoff/loop", commitOf(repo, tree, "loop"));
  rmSync(`${repo}/.git/objects/${blob.slice(0, 2)}/${blob.slice(2)}`);
  const before = refs(repo);

  const found = check(repo, "loop");
  assert.is(found.status, "fail");
  assert.is(found.fix, "git handoff doctor --repair");
  const out = cli(["doctor", "--repair", "--json"], { cwd: repo }).json.checks;
  assert.match(out.find((c: any) => c.name === "objects").detail, /0 restored, 1 removed/);
  assert.is(out.find((c: any) => c.name === "loop").status, "ok", "the loop check of the repairing run reads what the repair left");
  assert.is(check(repo, "loop").status, "ok");
  assert.equal(refs(repo).filter((r) => !r.startsWith("refs/handoff-local/repair-log ")), before.filter((r) => !r.startsWith("refs/handoff/loop ")));
});

test("a loop record this build cannot read, its objects all there: doctor does not send the user to --repair, which leaves it alone", () => {
  const repo = tempRepo();
  const blob = object(repo, "blob", "{}\n");
  const tree = spawnSync("git", ["mktree"], { cwd: repo, input: `100644 blob ${blob}\tloop.json\n`, encoding: "utf8" }).stdout.trim();
  gitOut(repo, "update-ref", "refs/handoff/loop", commitOf(repo, tree, "loop"));
  const before = refs(repo);

  const found = check(repo, "loop");
  assert.is(found.status, "fail");
  assert.match(found.detail, /refs\/handoff\/loop is corrupt: loop\.json:/);
  assert.not.match(found.fix, /doctor --repair/);
  assert.match(found.fix, /git update-ref -d refs\/handoff\/loop/);
  assert.is(check(repo, "loop", true).status, "fail");
  assert.equal(refs(repo), before, "--repair removes no record its objects hold whole");
});

test.run();
