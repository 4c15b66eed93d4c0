// zod is set up on first use in the bundles (scripts/lazy-zod.mjs): a cold command that reads its
// records from the caches never sets it up, and one that reads a record from git checks it with
// zod as before. zod marks its setting up with globalThis.__zod_globalConfig.
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { zodProbed as probed } from "./support/cold-probe.ts";
import { tasksCacheFile } from "../src/store/record-cache.ts";

test.after(cleanupTemp);

test("a cold task show, check or claim served by the caches sets up no zod", () => {
  const repo = tempRepo();
  for (const id of ["t1", "t2"]) assert.is(cli(["task", "add", `work ${id}`, "--id", id, "--scope", `src/${id}/**`], { cwd: repo, agent: "a1" }).code, 0);
  assert.is(cli(["claim", "t1"], { cwd: repo, agent: "a1" }).code, 0);
  for (const args of [["task", "show", "t1"], ["check", "src/t1/a.ts"], ["claim", "t2"], ["task", "show", "t2"]]) {
    const r = probed(repo, args);
    assert.is(r.status, 0, `${args.join(" ")}: ${r.stderr}`);
    assert.is(r.zod, false, `${args.join(" ")} set up zod`);
  }
});

test("a record read from git is checked by zod, set up on first use: a sound one shown as from the cache, a damaged one refused", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "work", "--id", "t1", "--scope", "src/a.ts"], { cwd: repo, agent: "a1" }).code, 0);
  const cached = probed(repo, ["task", "show", "t1", "--json"]);
  rmSync(tasksCacheFile(join(repo, ".git")));
  const fromGit = probed(repo, ["task", "show", "t1", "--json"]);
  assert.is(fromGit.status, 0, fromGit.stderr);
  assert.ok(fromGit.zod, "the record read from git was checked");
  assert.is(fromGit.stdout, cached.stdout);
  // A record missing its fields, committed over t1's format marker as t2.
  const bad = spawnSync("git", ["hash-object", "-w", "--stdin"], { cwd: repo, input: '{"id":"t2","status":"todo"}\n', encoding: "utf8" }).stdout.trim();
  const format = gitOut(repo, "rev-parse", "refs/handoff/tasks/t1:format");
  const tree = spawnSync("git", ["mktree"], { cwd: repo, input: `100644 blob ${format}\tformat\n100644 blob ${bad}\ttask.json\n`, encoding: "utf8" }).stdout.trim();
  gitOut(repo, "update-ref", "refs/handoff/tasks/t2", gitOut(repo, "commit-tree", tree, "-m", "damaged"));
  const r = probed(repo, ["task", "show", "t2"]);
  assert.is(r.status, 2, r.stderr);
  assert.match(r.stderr, /refs\/handoff\/tasks\/t2 is corrupt: task\.json: objective: expected string; priority: expected number; scope: expected array/);
});

test.run();
