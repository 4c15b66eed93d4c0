import { writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, gitOut, handoffRefs } from "./support/repo.ts";
import { commitFile, MIN, team } from "./support/team.ts";

test.after(cleanupTemp);

test("conflicts: real conflicts between agent branches and with main, clean pairs, who and which tasks; nothing touched", () => {
  const t = team(["alice", "bob", "carol", "dave", "eve"]);
  for (const a of ["alice", "bob", "carol", "dave"]) assert.is(t.as(a, ["session", "start", "--objective", `${a}'s part`]).code, 0);
  // eve declared long ago: stale, so her branch is not previewed.
  assert.is(t.as("eve", ["session", "start", "--objective", "old"], { HANDOFF_NOW: new Date(Date.now() - 30 * MIN).toISOString() }).code, 0);
  assert.is(t.as("lead", ["task", "add", "api", "--id", "api"]).code, 0);
  assert.is(t.as("alice", ["claim", "api"]).code, 0);

  commitFile(t.wt.alice!, "shared.txt", "line 1\nline 2 by alice\nline 3\n");
  commitFile(t.wt.bob!, "shared.txt", "line 1\nline 2 by bob\nline 3\n");
  commitFile(t.wt.carol!, "c.txt", "carol's\n");
  commitFile(t.wt.dave!, "d.txt", "dave's\n");
  commitFile(t.wt.eve!, "shared.txt", "eve rewrote everything\n");
  commitFile(t.repo, "c.txt", "main's own c.txt\n"); // add/add conflict with carol
  const heads = Object.fromEntries(["alice", "bob", "carol", "dave"].map((a) => [a, gitOut(t.wt[a]!, "rev-parse", "HEAD")]));
  const status = Object.fromEntries(["alice", "bob", "carol", "dave"].map((a) => [a, gitOut(t.wt[a]!, "status", "--porcelain")]));
  const refs = handoffRefs(t.repo);

  const r = t.as("lead", ["conflicts", "--json"]);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.json.integration, "main");
  assert.equal(r.json.sides.map((s: any) => s.branch), ["alice-work", "bob-work", "carol-work", "dave-work"]);
  const key = (p: any) => `${p.a.branch} x ${p.b.branch}`;
  const found = Object.fromEntries(r.json.pairs.map((p: any) => [key(p), p.error ?? p.conflicts.join(",")]));
  assert.equal(found, {
    "alice-work x bob-work": "shared.txt",
    "alice-work x carol-work": "",
    "alice-work x dave-work": "",
    "bob-work x carol-work": "",
    "bob-work x dave-work": "",
    "carol-work x dave-work": "",
    "alice-work x main": "",
    "bob-work x main": "",
    "carol-work x main": "c.txt",
    "dave-work x main": "",
  });
  assert.is(r.json.conflicting, 2);
  const ab = r.json.pairs.find((p: any) => key(p) === "alice-work x bob-work");
  assert.equal([ab.a.agents, ab.a.tasks, ab.b.agents, ab.kind], [["alice"], ["api"], ["bob"], "agents"]);

  const text = t.as("lead", ["merge-preview"]).stdout;
  assert.match(text.split("\n")[0]!, /^2 conflicts predicted: alice-work \(alice\) x bob-work \(bob\) on shared.txt, and 1 more pair/);
  assert.match(text, /alice-work \(alice\) \[api\] x bob-work \(bob\): CONFLICT shared.txt/);
  assert.match(text, /carol-work \(carol\) x main: CONFLICT c.txt/);
  assert.match(text, /dave-work \(dave\) x main: clean/);

  // A preview: no worktree, branch or handoff ref moved; only the caller's catch log (for stats),
  // which holds each conflict once although the preview ran twice.
  for (const a of ["alice", "bob", "carol", "dave"]) {
    assert.is(gitOut(t.wt[a]!, "rev-parse", "HEAD"), heads[a]);
    assert.is(gitOut(t.wt[a]!, "status", "--porcelain"), status[a]);
  }
  assert.is(handoffRefs(t.repo), refs);
  assert.is(gitOut(t.repo, "rev-list", "--count", "refs/handoff/log/lead"), "2");
});

test("conflicts with no active agents, and with git config handoff.integrationBranch", () => {
  const t = team(["alice"]);
  assert.match(t.as("lead", ["merge-preview"]).stdout, /no active agent branches/);
  gitOut(t.repo, "branch", "trunk", "main");
  gitOut(t.repo, "config", "handoff.integrationBranch", "trunk");
  assert.is(t.as("alice", ["session", "start", "--objective", "x"]).code, 0);
  const r = t.as("lead", ["merge-preview", "--json"]);
  assert.equal(r.json.pairs.map((p: any) => [p.a.branch, p.b.branch, p.error]), [["alice-work", "trunk", null]]);
  gitOut(t.repo, "config", "handoff.integrationBranch", "nope");
  const missing = t.as("lead", ["merge-preview", "--json"]);
  assert.is(missing.code, 0);
  assert.is(missing.json.pairs[0].error, "no branch nope");
  writeFileSync(`${t.repo}/.handoff.yaml`, "integration_branch: ../../x y\n");
  const bad = t.as("lead", ["merge-preview"]);
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /\.handoff\.yaml line 1: integration_branch/);
});

test.run();
