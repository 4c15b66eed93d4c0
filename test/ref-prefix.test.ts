// Branch-only hosts: a bare remote whose pre-receive hook rejects every ref outside refs/heads/.
// With `git handoff remote origin --ref-prefix refs/heads/handoff/` coordination works through it
// (claims, races, sync), local refs stay under refs/handoff/, doctor suggests the negative
// refspec for plain `git fetch`, and a prefix that clashes with a branch is refused.
import { chmodSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, handoffRefs, tempRepo } from "./support/repo.ts";
import { storeClaim, storeTasks } from "./support/seed.ts";
import { cloneOf, serveRoot, startHttp } from "./support/servers.ts";

test.after(() => cleanupTemp());

function branchOnlyRemote(name: string) {
  const served = serveRoot();
  const bare = served.bare(name);
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const hook = `${bare}/hooks/pre-receive`;
  writeFileSync(hook, '#!/bin/sh\nwhile read old new ref; do\n  case "$ref" in\n    refs/heads/*) ;;\n    *) echo "only branches may be pushed here, not $ref" >&2; exit 1 ;;\n  esac\ndone\n');
  chmodSync(hook, 0o755);
  return bare;
}

test("through a branch-only remote: refused without a prefix, works with one; local refs stay under refs/handoff/", () => {
  const bare = branchOnlyRemote("branches");
  const a = cloneOf(bare);
  const b = cloneOf(bare);
  const refused = cli(["task", "add", "ship", "--id", "early", "--push", "--json"], { cwd: a, agent: "lead" });
  assert.is(refused.code, 3, refused.stderr);
  assert.is(refused.json.error.code, "remote_rejected");
  assert.match(refused.json.error.message, /only branches may be pushed here/);

  for (const c of [a, b]) {
    const set = cli(["remote", "origin", "--ref-prefix", "refs/heads/handoff/"], { cwd: c });
    assert.is(set.code, 0, set.stderr);
    assert.match(set.stdout, /on remote: +refs\/heads\/handoff\/ \(branch prefix/);
  }
  assert.is(cli(["remote", "--json"], { cwd: a }).json.remote_prefix, "refs/heads/handoff/");
  assert.is(gitOut(a, "config", "remote.origin.handoffRefPrefix"), "refs/heads/handoff/");
  assert.is(gitOut(a, "config", "--get-all", "remote.origin.fetch"), "+refs/heads/*:refs/remotes/origin/*", "the user's refspecs are untouched");

  assert.is(cli(["sync"], { cwd: a, agent: "lead" }).code, 0);
  assert.is(cli(["task", "add", "ship it", "--id", "ship", "--push"], { cwd: a, agent: "lead" }).code, 0);
  assert.is(cli(["task", "add", "docs", "--id", "docs", "--push"], { cwd: a, agent: "lead" }).code, 0);
  assert.is(cli(["claim", "ship"], { cwd: a, agent: "alice" }).code, 0);
  // on the remote: branches only; here: refs/handoff/ and the tracking refs
  const onRemote = gitOut(bare, "for-each-ref", "--format=%(refname)").split("\n");
  assert.ok(onRemote.includes("refs/heads/handoff/tasks/ship"), onRemote.join(" "));
  assert.ok(onRemote.every((r) => r.startsWith("refs/heads/")), onRemote.join(" "));
  assert.match(handoffRefs(a), /^refs\/handoff\/tasks\/ship /m);
  assert.match(gitOut(a, "for-each-ref", "--format=%(refname)", "refs/handoff-remotes/origin/"), /refs\/handoff-remotes\/origin\/tasks\/ship/);
  assert.is(JSON.parse(gitOut(bare, "show", "refs/heads/handoff/tasks/ship:task.json")).claim.agent, "alice");

  // the other clone learns and loses through the remote, and claims what is free
  const lost = cli(["claim", "ship", "--json"], { cwd: b, agent: "bob" });
  assert.is(lost.code, 3, lost.stderr);
  assert.is(lost.json.error.data.holder, "alice");
  const next = cli(["claim", "--next", "--json"], { cwd: b, agent: "bob" });
  assert.is(next.code, 0, next.stderr);
  assert.is(next.json.id, "docs");
  assert.is(cli(["done", "docs"], { cwd: b, agent: "bob" }).code, 0);
  assert.is(cli(["sync"], { cwd: b, agent: "bob" }).code, 0);
  assert.is(cli(["sync"], { cwd: a, agent: "alice" }).code, 0);
  assert.is(cli(["task", "show", "docs", "--json"], { cwd: a }).json.status, "done");
  const tasks = (c: string) => handoffRefs(c).split("\n").filter((l) => l.startsWith("refs/handoff/tasks/")).join("\n");
  assert.is(tasks(a), tasks(b));
});

test("doctor suggests the negative refspec; with it a plain git fetch copies no coordination branches", () => {
  const bare = branchOnlyRemote("fetchcost");
  const a = cloneOf(bare);
  assert.is(cli(["remote", "origin", "--ref-prefix", "refs/heads/coord/"], { cwd: a }).code, 0);
  assert.is(cli(["task", "add", "x", "--id", "x", "--push"], { cwd: a, agent: "lead" }).code, 0);
  const user = cloneOf(bare);
  // the cost: a plain fetch with the default refspec copies them
  assert.match(gitOut(user, "for-each-ref", "--format=%(refname)", "refs/remotes/origin/"), /refs\/remotes\/origin\/coord\/tasks\/x/);
  assert.is(cli(["remote", "origin", "--ref-prefix", "refs/heads/coord/"], { cwd: user }).code, 0);
  const doc = cli(["doctor", "--json"], { cwd: user });
  const check = doc.json.checks.find((c: any) => c.name === "ref-prefix");
  assert.is(check.status, "warn");
  assert.match(check.fix, /git config --add remote\.origin\.fetch '\^refs\/heads\/coord\/\*'/);
  gitOut(user, "config", "--add", "remote.origin.fetch", "^refs/heads/coord/*");
  gitOut(user, "update-ref", "-d", "refs/remotes/origin/coord/tasks/x");
  gitOut(user, "fetch", "-q", "origin");
  assert.is(gitOut(user, "for-each-ref", "--format=%(refname)", "refs/remotes/origin/coord/"), "");
  const after = cli(["doctor", "--json"], { cwd: user }).json.checks;
  assert.is(after.find((c: any) => c.name === "ref-prefix").status, "ok");
  assert.match(after.find((c: any) => c.name === "reachability").detail, /with [1-9]\d* coordination ref\(s\) under refs\/heads\/coord\//);
});

test("clones that disagree on --ref-prefix: sync warns and doctor fails in each, by path, through git and over HTTP", async () => {
  const served = serveRoot();
  const http = await startHttp(served.root);
  const fresh = (name: string) => {
    gitOut(tempRepo(), "push", "-q", served.bare(name), "main");
    return name;
  };
  try {
    for (const [how, url, env] of [
      ["path, in process", served.bare(fresh("by-path")), {}],
      ["path, through git", served.bare(fresh("by-git")), { HANDOFF_PATH_REMOTE: "git" }],
      ["smart HTTP", http.url(fresh("by-http")), {}],
    ] as const) {
      const a = cloneOf(url);
      const b = cloneOf(url);
      const run = (cwd: string, agent: string, args: string[]) => cli(args, { cwd, agent, env });
      assert.is(run(a, "lead", ["remote", "origin", "--ref-prefix", "refs/heads/handoff/"]).code, 0, how);
      const id = `t-${how.replace(/\W+/g, "-")}`;
      // The writes each side makes in its namespace in-process (support/seed.ts, through the store's
      // own transport for the remote); the syncs and doctors under test go the way named above.
      await storeTasks({ cwd: a, agent: "lead", push: true }, [{ id, objective: "split work", scope: ["s.txt"], exclusive: true }]);
      await storeClaim({ cwd: a, agent: "alice" }, id);
      // b keeps the default namespace: it does not see alice's claim, and says why
      const sb = run(b, "bob", ["sync", "--json"]);
      assert.is(sb.code, 0, `${how}: ${sb.stderr}`);
      assert.equal(sb.json.split, { prefix: "refs/handoff/", namespace: "refs/heads/handoff/", tasks: 1, leases: true }, how);
      const text = run(b, "bob", ["sync"]).stdout;
      assert.match(text, /warning: origin also holds coordination refs under refs\/heads\/handoff\/ \(1 task ref\(s\) and a lease ref\), while this clone keeps its own under refs\/handoff\//, how);
      assert.match(text, /git handoff remote origin --ref-prefix refs\/heads\/handoff\/ in each/, how);
      const doc = run(b, "bob", ["doctor", "--json"]);
      const ns = doc.json.checks.find((c: { name: string }) => c.name === "namespace");
      assert.is(ns?.status, "fail", `${how}: ${JSON.stringify(doc.json.checks)}`);
      assert.is(doc.code, 2, how);
      // and the other way round, once b has written to its namespace
      await storeTasks({ cwd: b, agent: "bob", push: true }, [{ id: `${id}-b`, objective: "mine" }]);
      const sa = run(a, "alice", ["sync", "--json"]);
      assert.is(sa.code, 0, sa.stderr);
      assert.equal([sa.json.split?.prefix, sa.json.split?.namespace], ["refs/heads/handoff/", "refs/handoff/"], how);
    }
  } finally {
    await http.stop();
  }
});

test("one namespace on the remote: sync has no split and doctor no namespace check", async () => {
  const bare = serveRoot().bare("one");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const a = cloneOf(bare);
  await storeTasks({ cwd: a, agent: "lead", push: true }, [{ id: "x", objective: "x", scope: ["x.txt"] }]);
  await storeClaim({ cwd: a, agent: "alice" }, "x");
  const s = cli(["sync", "--json"], { cwd: a, agent: "alice" });
  assert.is(s.code, 0, s.stderr);
  assert.is(s.json.split, undefined);
  assert.not.ok(cli(["doctor", "--json"], { cwd: a }).json.checks.some((c: { name: string }) => c.name === "namespace"));
});

test("a prefix that clashes with a branch, or is not a branch prefix, is refused and nothing changes", () => {
  const bare = branchOnlyRemote("clash");
  const a = cloneOf(bare);
  gitOut(a, "push", "-q", "origin", "main:refs/heads/coord", "main:refs/heads/team/feature");
  const config = () => gitOut(a, "config", "--list", "--local");
  const before = config();
  const cases: [string, RegExp][] = [
    ["refs/heads/coord/", /clashes with the branch coord on origin: git cannot keep a branch and refs under a folder/],
    ["refs/heads/team/", /clashes with the branch team\/feature on origin: it is not a coordination ref/],
    ["refs/handoffs/", /must start with refs\/heads\//],
    ["refs/heads/x", /must end with \//],
    ["refs/heads/a..b/", /component/],
  ];
  for (const [prefix, why] of cases) {
    const r = cli(["remote", "origin", "--ref-prefix", prefix, "--json"], { cwd: a });
    assert.is(r.code, 2, `${prefix}: ${r.stderr}`);
    assert.is(r.json.error.code, "invalid_input");
    assert.match(r.json.error.message, why);
    assert.is(config(), before, prefix);
  }
  gitOut(a, "branch", "mine");
  const local = cli(["remote", "origin", "--ref-prefix", "refs/heads/mine/"], { cwd: a });
  assert.is(local.code, 2);
  assert.match(local.stderr, /clashes with the branch mine in this clone/);
  assert.is(cli(["remote", "--ref-prefix", "refs/heads/x/"], { cwd: a }).code, 2, "usage: needs a remote name");
  // undo: back to refs/handoff/ on the remote
  assert.is(cli(["remote", "origin", "--ref-prefix", "refs/heads/ok/"], { cwd: a }).code, 0);
  assert.is(cli(["remote", "origin", "--ref-prefix", "refs/handoff/", "--json"], { cwd: a }).json.remote_prefix, "refs/handoff/");
});

test.run();
