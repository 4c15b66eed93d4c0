// A dedicated coordination remote: `git handoff remote --url URL` adds a git remote with no fetch
// refspec and syncs through it, so the code repository's remote carries no refs/handoff/* (its
// ref advertisement, sent with every push and fetch, stays small). Over smart HTTP, two clones.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, handoffRefs, tempRepo } from "./support/repo.ts";
import { cloneOf, serveRoot, startHttp } from "./support/servers.ts";

let stopHttp: (() => Promise<void>) | undefined;
test.after(async () => {
  await stopHttp?.();
  cleanupTemp();
});

test("remote --url: a separate repository carries refs/handoff/*, the code remote none; a plain git fetch copies nothing from it", async () => {
  const served = serveRoot();
  const code = served.bare("code");
  served.bare("coord");
  gitOut(tempRepo(), "push", "-q", code, "main");
  const http = await startHttp(served.root);
  stopHttp = http.stop;
  const a = cloneOf(http.url("code"));
  const b = cloneOf(http.url("code"));
  for (const c of [a, b]) {
    const set = cli(["remote", "--url", http.url("coord"), "--json"], { cwd: c });
    assert.is(set.code, 0, set.stderr);
    assert.is(set.json.remote, "coord");
    assert.is(set.json.created, true);
    assert.is(set.json.url, http.url("coord"));
    assert.is(gitOut(c, "config", "handoff.remote"), "coord");
    assert.is(gitOut(c, "config", "remote.coord.url"), http.url("coord"));
    assert.not.match(gitOut(c, "config", "--list", "--local"), /^remote\.coord\.fetch=/m, "no fetch refspec");
    assert.is(gitOut(c, "config", "remote.coord.skipFetchAll"), "true");
  }
  // the same again is a no-op that says so
  const again = cli(["remote", "--url", http.url("coord")], { cwd: a });
  assert.is(again.code, 0, again.stderr);
  assert.match(again.stdout, /git remote coord already had that URL/);
  assert.match(again.stdout, /git handoff store --separate/, "the other half of keeping the user's git fast is named");
  const c = cloneOf(http.url("code"));
  assert.is(cli(["store", "--separate"], { cwd: c }).code, 0);
  assert.not.match(cli(["remote", "--url", http.url("coord")], { cwd: c }).stdout, /store --separate/, "not once it is done");

  assert.is(cli(["task", "add", "ship it", "--id", "ship", "--push"], { cwd: a, agent: "lead" }).code, 0);
  assert.is(cli(["claim", "ship"], { cwd: a, agent: "alice" }).code, 0);
  const lost = cli(["claim", "ship", "--json"], { cwd: b, agent: "bob" });
  assert.is(lost.code, 3, lost.stderr);
  assert.is(lost.json.error.data.holder, "alice");
  assert.is(cli(["sync"], { cwd: b, agent: "bob" }).code, 0);
  assert.is(cli(["task", "show", "ship", "--json"], { cwd: b }).json.claim.agent, "alice");

  // the coordination repository holds the task; the code repository holds branches only
  assert.match(gitOut(served.root + "/coord.git", "for-each-ref", "--format=%(refname)"), /refs\/handoff\/tasks\/ship/);
  assert.is(gitOut(code, "for-each-ref", "--format=%(refname)", "refs/handoff/"), "");
  // the user's git: fetch --all and push of a branch touch nothing of handoff's
  gitOut(a, "checkout", "-q", "-b", "feature");
  gitOut(a, "commit", "-q", "--allow-empty", "-m", "feature work");
  gitOut(a, "push", "-q", "origin", "feature");
  gitOut(b, "fetch", "-q", "--all");
  assert.is(gitOut(b, "for-each-ref", "--format=%(refname)", "refs/remotes/coord/"), "");
  assert.match(gitOut(b, "for-each-ref", "--format=%(refname)", "refs/remotes/origin/"), /refs\/remotes\/origin\/feature/);
  const tasks = (c: string) => handoffRefs(c).split("\n").filter((l) => l.startsWith("refs/handoff/tasks/")).join("\n");
  assert.is(tasks(a), tasks(b));
});

test("a team moves from the code remote to a coordination remote: sync, switch, sync; nothing is lost", () => {
  const served = serveRoot();
  const code = served.bare("moving");
  const coord = served.bare("moving-coord");
  gitOut(tempRepo(), "push", "-q", code, "main");
  const a = cloneOf(code);
  const b = cloneOf(code);
  assert.is(cli(["task", "add", "old work", "--id", "old", "--push"], { cwd: a, agent: "lead" }).code, 0);
  assert.is(cli(["claim", "old"], { cwd: a, agent: "alice" }).code, 0);
  assert.is(cli(["sync"], { cwd: b, agent: "bob" }).code, 0);
  for (const c of [a, b]) assert.is(cli(["remote", "--url", coord], { cwd: c }).code, 0);
  assert.is(cli(["sync"], { cwd: a, agent: "alice" }).code, 0);
  assert.is(cli(["sync"], { cwd: b, agent: "bob" }).code, 0);
  const lost = cli(["claim", "old", "--json"], { cwd: b, agent: "bob" });
  assert.is(lost.code, 3, lost.stderr);
  assert.is(lost.json.error.data.holder, "alice", "the claim holds through the new remote");
  assert.match(gitOut(coord, "for-each-ref", "--format=%(refname)"), /refs\/handoff\/tasks\/old/);
  const tasks = (c: string) => handoffRefs(c).split("\n").filter((l) => l.startsWith("refs/handoff/tasks/")).join("\n");
  assert.is(tasks(a), tasks(b));
});

test("remote --url refuses bad input and a name taken by another URL; nothing changes", () => {
  const served = serveRoot();
  const code = served.bare("code2");
  gitOut(tempRepo(), "push", "-q", code, "main");
  const a = cloneOf(code);
  served.bare("other");
  const config = () => gitOut(a, "config", "--list", "--local");
  const before = config();
  const cases: [string[], number, RegExp][] = [
    [["remote", "--url", "-oProxyCommand=x"], 2, /starts with '-'/],
    [["remote", "--url", ""], 2, /is empty/],
    [["remote", "--url", "a\nb"], 2, /control character/],
    [["remote", "--url", "x".repeat(3000)], 2, /at most 2048/],
    [["remote", "bad/name", "--url", served.root + "/other.git"], 2, /invalid remote name/],
    [["remote", "origin", "--url", served.root + "/other.git"], 3, /already exists with another URL/],
    [["remote", "--url", served.root + "/other.git", "--none"], 2, /not several/],
    [["remote", "coord", "--url", served.root + "/other.git", "--ref-prefix", "refs/handoffs/"], 2, /must start with refs\/heads\//],
    [["remote", "--url", served.root + "/typo.git"], 4, /^no repository at .*\/typo\.git/],
    [["remote", "--url", "../nowhere.git"], 4, /^no repository at .*\/nowhere\.git/],
    [["remote", "--url", "file:///nonexistent/x.git"], 4, /^no repository at \/nonexistent\/x\.git/],
  ];
  for (const [args, status, why] of cases) {
    const r = cli([...args, "--json"], { cwd: a });
    assert.is(r.code, status, `${args.join(" ").slice(0, 80)}: ${r.stderr}`);
    assert.match(r.json?.error?.message ?? r.stderr, why, args.join(" ").slice(0, 80));
    assert.is(config(), before, args.join(" ").slice(0, 80));
  }
  assert.is(handoffRefs(a), "");
});

test.run();
