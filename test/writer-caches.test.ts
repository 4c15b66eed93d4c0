// A one-shot writer leaves the records it wrote in the caches the next one-shot command reads
// (tasks.cache, leases.cache), so a claim's hook check or the next claim's listing reads no object.
// A task record's entry is written with the record, before its ref update, so it names the
// objects written for it and counts only while they are there: a prune may remove objects no ref
// points at yet, and a record whose objects are gone is read from git, which says so
// (prune-repair.test.ts has the repair side). The lease set's cache is written once the update has
// landed and its objects were checked.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";
import { tasksCacheFile } from "../src/store/record-cache.ts";
import { leaseCacheFile } from "../src/store/lease-cache-file.ts";

test.after(cleanupTemp);

const loose = (repo: string, oid: string) => `${repo}/.git/objects/${oid.slice(0, 2)}/${oid.slice(2)}`;

test("a task the writer cached is served while its objects are loose; packed or pruned, it is read from git", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "cached by its writer", "--id", "t1"], { cwd: repo, agent: "a1" }).code, 0);
  const tip = gitOut(repo, "rev-parse", "refs/handoff/tasks/t1");
  const blob = gitOut(repo, "rev-parse", "refs/handoff/tasks/t1:task.json");
  const tree = gitOut(repo, "rev-parse", "refs/handoff/tasks/t1^{tree}");
  const line = readFileSync(tasksCacheFile(`${repo}/.git`), "utf8").split("\n").find((l) => l.startsWith(tip));
  assert.is(line?.split("\t")[1], `!${tip},${tree},${blob}`, "the line names the commit, tree and blob");
  assert.match(cli(["task", "show", "t1"], { cwd: repo, agent: "a1" }).stdout, /cached by its writer/);
  // Packed (the loose files gone): read from git once, then cached as a plain line.
  gitOut(repo, "gc", "-q", "--prune=now");
  assert.match(cli(["task", "show", "t1"], { cwd: repo, agent: "a1" }).stdout, /cached by its writer/);
  const lines = readFileSync(tasksCacheFile(`${repo}/.git`), "utf8").split("\n").filter((l) => l.startsWith(tip));
  assert.ok(lines.some((l) => l.split("\t")[1]!.startsWith("{")), `a plain line now: ${lines.join(" | ")}`);
  // A second task whose blob is pruned before anything read it: git's answer, not the cache's.
  assert.is(cli(["task", "add", "pruned", "--id", "t2"], { cwd: repo, agent: "a1" }).code, 0);
  rmSync(loose(repo, gitOut(repo, "rev-parse", "refs/handoff/tasks/t2:task.json")));
  const shown = cli(["task", "show", "t2", "--json"], { cwd: repo, agent: "a1" });
  assert.is(shown.code, 2);
  assert.is(shown.json.error.code, "corrupt_state");
});

test("the lease set its writer cached once its update landed answers a check; a cache naming objects that are gone is passed over", () => {
  const repo = tempRepo();
  assert.is(cli(["lease", "a.ts", "--exclusive"], { cwd: repo, agent: "alice" }).code, 0);
  assert.is(cli(["lease", "b.ts", "--exclusive"], { cwd: repo, agent: "alice" }).code, 0);
  const tip = gitOut(repo, "rev-parse", "refs/handoff/leases");
  const file = leaseCacheFile(`${repo}/.git`);
  const cache = readFileSync(file, "utf8").split("\n");
  assert.is(cache[0], tip);
  assert.is(cache[1], "#format 1");
  // Written after the ref update landed and its objects were checked: nothing left to look for.
  assert.not.ok(cache.some((l) => l.startsWith("#fresh")), cache.join("\n"));
  assert.is(cli(["check", "a.ts"], { cwd: repo, agent: "bob" }).code, 3, "held by alice, from the cache");
  // A cache an earlier build left before its update landed names the objects it counts on: one of
  // them gone (a prune before the update), the check reads git, which says what is missing.
  const blob = gitOut(repo, "rev-parse", "refs/handoff/leases:leases.json");
  writeFileSync(file, [cache[0], cache[1], `#fresh ${tip} ${blob}`, ...cache.slice(2)].join("\n"));
  rmSync(loose(repo, blob));
  const r = cli(["check", "a.ts", "--json"], { cwd: repo, agent: "bob" });
  assert.is(r.code, 2, r.stdout + r.stderr);
  assert.is(r.json.error.code, "corrupt_state");
});

test("a claim through a sync remote leaves its caches for the refs it set, not for their tracking refs", () => {
  const remote = tempDir();
  gitOut(remote, "init", "-q", "--bare");
  const repo = tempRepo();
  gitOut(repo, "remote", "add", "origin", remote);
  gitOut(repo, "push", "-q", "origin", "HEAD");
  assert.is(cli(["remote", "origin"], { cwd: repo, agent: "lead" }).code, 0);
  assert.is(cli(["task", "add", "remote work", "--id", "r1", "--scope", "src/r1.ts"], { cwd: repo, agent: "lead" }).code, 0);
  assert.is(cli(["sync"], { cwd: repo, agent: "lead" }).code, 0);
  const r = cli(["claim", "r1"], { cwd: repo, agent: "w1" });
  assert.is(r.code, 0, r.stderr);
  // The same commits went to the tracking refs in the transaction that set the refs.
  assert.is(gitOut(repo, "rev-parse", "refs/handoff-remotes/origin/tasks/r1"), gitOut(repo, "rev-parse", "refs/handoff/tasks/r1"));
  const last = readFileSync(`${repo}/.git/handoff/claimed.index`, "utf8").trimEnd().split("\n").at(-1)!;
  assert.ok(last.startsWith(`refs/handoff/tasks/r1 ${gitOut(repo, "rev-parse", "refs/handoff/tasks/r1")} claimed\t`), last.slice(0, 120));
  assert.is(readFileSync(leaseCacheFile(`${repo}/.git`), "utf8").split("\n")[0], gitOut(repo, "rev-parse", "refs/handoff/leases"));
});

test.run();
