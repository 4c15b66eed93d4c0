// A claim through each kind of remote: a bare repo by path and by file://, git daemon (git://)
// and smart HTTP (git http-backend). The second clone is told who won; nothing of the user's moves.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, cliAsync, gitOut, handoffRefs, seedTasks, tempRepo } from "./support/repo.ts";
import { cloneOf, serveRoot, startDaemon, twoClonesOverHttp, userState, type GitServer } from "./support/servers.ts";

const servers: GitServer[] = [];
test.after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  cleanupTemp();
});

/** A project with one commit on main, pushed to a bare repo in a served folder. */
function seededRemote(name: string) {
  const served = serveRoot();
  const bare = served.bare(name);
  const seed = tempRepo();
  gitOut(seed, "push", "-q", bare, "main");
  return { ...served, bare };
}

async function claimThrough(url: (bare: string) => string, name: string) {
  const { bare } = seededRemote(name);
  const a = cloneOf(url(bare));
  const b = cloneOf(url(bare));
  const userA = userState(a);
  const userB = userState(b);

  assert.is(cli(["task", "add", "ship", "it", "--id", "ship"], { cwd: a, agent: "lead" }).code, 0);
  const pushed = cli(["sync", "--json"], { cwd: a, agent: "lead" });
  assert.is(pushed.code, 0, pushed.stderr);
  assert.equal(pushed.json.pushed, ["refs/handoff/tasks/ship"]);

  const won = cli(["claim", "ship", "--json"], { cwd: a, agent: "alice" });
  assert.is(won.code, 0, won.stderr);
  // Granted means on the remote: the bare repo holds alice's claim.
  const onRemote = JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/ship:task.json"));
  assert.is(onRemote.claim.agent, "alice");

  // Clone b never synced: its claim still learns the remote's state and is refused, naming alice.
  const lost = cli(["claim", "ship", "--json"], { cwd: b, agent: "bob" });
  assert.is(lost.code, 3, lost.stdout + lost.stderr);
  assert.is(lost.json.error.code, "held_by_other");
  assert.is(lost.json.error.data.holder, "alice");
  assert.match(lost.stderr, /held by alice/);

  assert.is(userState(a), userA);
  assert.is(userState(b), userB);
  assert.not.match(gitOut(a, "config", "--get-regexp", "remote"), /refs\/handoff/);
  return { bare, a, b };
}

test("a bare repo by path", async () => {
  await claimThrough((bare) => bare, "bypath");
});

test("a bare repo by file://", async () => {
  await claimThrough((bare) => `file://${bare}`, "byfile");
});

test("git daemon (git://)", async () => {
  const served = serveRoot();
  served.bare("probe");
  const daemon = await startDaemon(served.root, "probe");
  servers.push(daemon);
  const bare = served.bare("viadaemon");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const a = cloneOf(daemon.url("viadaemon"));
  const b = cloneOf(daemon.url("viadaemon"));
  assert.is(cli(["task", "add", "ship", "--id", "ship", "--push"], { cwd: a, agent: "lead" }).code, 0);
  assert.is(cli(["claim", "ship"], { cwd: a, agent: "alice" }).code, 0);
  const lost = cli(["claim", "ship", "--json"], { cwd: b, agent: "bob" });
  assert.is(lost.code, 3, lost.stderr);
  assert.is(lost.json.error.data.holder, "alice");
  assert.is(JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/ship:task.json")).claim.agent, "alice");
});

test("smart HTTP through git http-backend", async () => {
  const { a, b } = await twoClonesOverHttp("viahttp", servers);
  const before = userState(b);
  assert.is(cli(["task", "add", "ship", "--id", "ship"], { cwd: a, agent: "lead" }).code, 0);
  assert.is(cli(["sync"], { cwd: a, agent: "lead" }).code, 0);
  assert.is(cli(["claim", "ship"], { cwd: a, agent: "alice" }).code, 0);
  const lost = cli(["claim", "ship", "--json"], { cwd: b, agent: "bob" });
  assert.is(lost.code, 3, lost.stderr);
  assert.is(lost.json.error.data.holder, "alice");
  const synced = cli(["sync", "--json"], { cwd: b, agent: "bob" });
  assert.is(synced.code, 0, synced.stderr);
  assert.is(cli(["task", "show", "ship", "--json"], { cwd: b }).json.claim.agent, "alice");
  assert.is(userState(b), before);
});

test("remote: shows the default, sets, refuses unknown names, turns off", () => {
  const { bare } = seededRemote("cfg");
  const a = cloneOf(bare);
  const shown = cli(["remote", "--json"], { cwd: a });
  assert.is(shown.json.remote, "origin");
  assert.is(shown.json.explicit, false);
  const bad = cli(["remote", "nope"], { cwd: a });
  assert.is(bad.code, 4);
  assert.match(bad.stderr, /no git remote named nope/);
  const evil = cli(["remote", "../x"], { cwd: a });
  assert.is(evil.code, 2);
  gitOut(a, "remote", "add", "upstream", bare);
  assert.is(cli(["remote", "upstream", "--json"], { cwd: a }).json.remote, "upstream");
  assert.is(gitOut(a, "config", "handoff.remote"), "upstream");
  assert.is(cli(["remote", "--none", "--json"], { cwd: a }).json.remote, null);
  // Sync off: claims are local again, and sync says there is nothing to sync with.
  assert.is(cli(["task", "add", "x", "--id", "x"], { cwd: a }).code, 0);
  assert.is(cli(["claim", "x"], { cwd: a, agent: "alice" }).code, 0);
  assert.is(gitOut(bare, "for-each-ref", "refs/handoff/"), "");
  assert.is(cli(["sync"], { cwd: a }).code, 4);
  assert.is(cli(["remote", "--default", "--json"], { cwd: a }).json.remote, "origin");
  // A hand-edited setting that would escape refs/handoff-remotes/ is refused, nothing written.
  gitOut(a, "config", "handoff.remote", "../../heads/main");
  const before = handoffRefs(a);
  const escaped = cli(["claim", "x", "--json"], { cwd: a, agent: "bob" });
  assert.is(escaped.code, 2);
  assert.match(escaped.stderr, /handoff\.remote/);
  assert.is(handoffRefs(a), before);
});

test("claim --next across two clones: every task goes to exactly one agent", async () => {
  const { bare } = seededRemote("next");
  const a = cloneOf(bare);
  const b = cloneOf(bare);
  const ids = ["n1", "n2", "n3", "n4", "n5", "n6"];
  await seedTasks(a, ids.map((id) => ({ id, objective: id }))); // in-process: `task add` is not what is tested here
  assert.is(cli(["sync"], { cwd: a }).code, 0);
  // b has never synced: claim --next must find the remote's tasks by itself.
  const runs = [a, a, a, b, b, b, b].map((cwd, i) => cliAsync(["claim", "--next", "--json"], { cwd, agent: `worker-${i}` }));
  const results = await Promise.all(runs);
  const won = results.filter((r) => r.code === 0).map((r) => r.json.id);
  assert.is(won.length, 6, results.map((r) => r.stderr).join("\n"));
  assert.equal([...won].sort(), ids);
  const rest = results.filter((r) => r.code !== 0);
  assert.is(rest.length, 1);
  assert.is(rest[0]!.json.error.code, "no_task_ready");
  for (const id of ids) assert.is(JSON.parse(gitOut(bare, "show", `refs/handoff/tasks/${id}:task.json`)).fence, 1);
});

test.run();
