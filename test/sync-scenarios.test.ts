// Two clones of one project sharing coordination state through a bare remote, step by step as a
// user would see it: offline grants settled at sync, divergent edits replayed, fencing after a
// takeover, compaction into the archive. The user's branches and remote config never move.
import { spawnSync } from "node:child_process";
import { renameSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { cleanEnv, cleanupTemp, cli, gitOut, handoffRefs, tempDir, tempRepo } from "./support/repo.ts";
import { cloneOf, serveRoot, userState } from "./support/servers.ts";
import { storeClaim, storeDone, storeSync, storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

function project() {
  const bare = serveRoot().bare("project");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const a = cloneOf(bare);
  const b = cloneOf(bare);
  return { bare, a, b, users: [userState(a), userState(b)] };
}

const ok = (r: ReturnType<typeof cli>) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r;
};

const remoteTask = (bare: string, id: string) => JSON.parse(gitOut(bare, "show", `refs/handoff/tasks/${id}:task.json`));

test("offline: exclusive ops fail clearly, --offline grants tentatively, the next sync confirms one and refuses the other", async () => {
  const { bare, a, b, users } = project();
  await storeTasks({ cwd: a, agent: "lead" }, [{ id: "lost", objective: "will be lost" }]);
  await storeTasks({ cwd: a, agent: "lead" }, [{ id: "won", objective: "will be won" }]);
  await storeSync({ cwd: a });
  await storeSync({ cwd: b });

  renameSync(bare, `${bare}.away`); // the remote is unreachable from here on
  const before = handoffRefs(a);
  const refused = cli(["claim", "lost", "--json"], { cwd: a, agent: "alice" });
  assert.is(refused.code, 3);
  assert.is(refused.json.error.code, "remote_unreachable");
  assert.match(refused.stderr, /--offline/);
  assert.is(handoffRefs(a), before, "a refused claim changes no ref");
  // A write that is not exclusive, under --push: refused for what it is, nothing written.
  const pushed = cli(["task", "add", "later", "--id", "later", "--push", "--json"], { cwd: a, agent: "lead" });
  assert.is(pushed.code, 3, pushed.stderr);
  assert.is(pushed.json.error.code, "remote_unreachable");
  assert.match(pushed.stderr, /nothing was written \(without --push the write is kept here and sent by the next sync\)/);
  assert.not.match(pushed.stderr, /exclusive|--offline|grant/);
  assert.is(handoffRefs(a), before, "a refused --push write changes no ref");
  // Reads always work.
  ok(cli(["task", "list"], { cwd: a }));
  ok(cli(["status"], { cwd: a, agent: "alice" }));

  const t1 = ok(cli(["claim", "lost", "--offline", "--json"], { cwd: a, agent: "alice" }));
  assert.is(t1.json.claim.agent, "alice");
  assert.match(t1.stderr, /tentative/);
  ok(cli(["claim", "won", "--offline", "--over-capacity"], { cwd: a, agent: "alice" }));
  assert.is(ok(cli(["status", "--json"], { cwd: a, agent: "alice" })).json.tentative.length, 2);
  assert.is(cli(["sync"], { cwd: a }).code, 3, "sync needs the remote");

  renameSync(`${bare}.away`, bare); // back online; meanwhile bob takes `lost` from the other clone
  ok(cli(["claim", "lost"], { cwd: b, agent: "bob" }));

  const s = ok(cli(["sync", "--json"], { cwd: a, agent: "alice" })).json;
  assert.equal(s.refused.map((t: any) => t.event.task), ["lost"]);
  assert.equal(s.confirmed.map((t: any) => t.event.task), ["won"]);
  assert.is(s.conflicts.length, 1);
  assert.is(s.conflicts[0].agent, "alice");
  assert.is(s.conflicts[0].holder, "bob");
  assert.match(s.conflicts[0].message, /^claim of lost by alice at \S+ no longer applies: .*held by bob/, "the operation, as a noun");

  assert.is(remoteTask(bare, "lost").claim.agent, "bob");
  assert.is(remoteTask(bare, "won").claim.agent, "alice");
  assert.is(ok(cli(["task", "show", "lost", "--json"], { cwd: a })).json.claim.agent, "bob");

  // The conflict waits for alice in status until she acknowledges it.
  const st = ok(cli(["status", "--json"], { cwd: a, agent: "alice" })).json;
  assert.is(st.conflicts.length, 1);
  assert.is(st.tentative.length, 0);
  assert.match(ok(cli(["status"], { cwd: a, agent: "alice" })).stdout, /no longer applies/);
  assert.match(ok(cli(["sync-conflicts"], { cwd: a, agent: "alice" })).stdout, /  alice  claim of lost by alice at /);
  assert.is(ok(cli(["sync-conflicts", "--ack", "--json"], { cwd: a, agent: "alice" })).json.acknowledged, 1);
  assert.is(ok(cli(["sync-conflicts", "--json"], { cwd: a, agent: "alice" })).json.length, 0);

  assert.is(userState(a), users[0]);
  assert.is(userState(b), users[1]);
});

test("divergent non-exclusive edits from two clones both survive sync", async () => {
  const { bare, a, b, users } = project();
  await storeTasks({ cwd: a, agent: "lead" }, [{ id: "shared", objective: "shared" }]);
  await storeSync({ cwd: a });
  await storeClaim({ cwd: b, agent: "alice" }, "shared"); // through the remote
  await storeSync({ cwd: a });

  // Both clones write locally, without syncing in between.
  ok(cli(["renew", "shared", "--ttl", "2h"], { cwd: a, agent: "alice" }));
  ok(cli(["task", "add", "from a", "--id", "a-only"], { cwd: a, agent: "lead" }));
  ok(cli(["renew", "shared", "--ttl", "3h"], { cwd: b, agent: "alice" }));
  ok(cli(["task", "add", "from b", "--id", "b-only"], { cwd: b, agent: "lead" }));
  ok(cli(["cancel", "a-only", "--reason", "not needed"], { cwd: a, agent: "lead" }));

  assert.equal(ok(cli(["sync", "--json"], { cwd: a })).json.pushed.sort(), ["refs/handoff/tasks/a-only", "refs/handoff/tasks/shared"]);
  const sb = ok(cli(["sync", "--json"], { cwd: b })).json;
  assert.equal(sb.replayed, ["refs/handoff/tasks/shared"]);
  assert.is(sb.conflicts.length, 0);
  ok(cli(["sync"], { cwd: a }));

  const renewals = gitOut(bare, "log", "--format=%s", "refs/handoff/tasks/shared").split("\n").filter((l) => l.startsWith("renewed"));
  assert.is(renewals.length, 2, "both renewals are on the remote");
  assert.is(remoteTask(bare, "a-only").status, "cancelled");
  assert.is(remoteTask(bare, "b-only").status, "todo");
  // Both clones now agree with the remote, ref for ref.
  const remoteRefs = gitOut(bare, "for-each-ref", "--format=%(refname) %(objectname)", "refs/handoff/");
  assert.is(handoffRefs(a), remoteRefs);
  assert.is(handoffRefs(b), remoteRefs);
  const events = ok(cli(["events", "--task", "shared", "--type", "renewed", "--json"], { cwd: a })).json;
  assert.is(events.length, 2);
  assert.is(userState(a), users[0]);
  assert.is(userState(b), users[1]);
});

/** A commit on a non-task ref, the way other features (agent heartbeats) write theirs. */
function writeOn(repo: string, ref: string, text: string): void {
  const run = (args: string[], input = "") => {
    const r = spawnSync("git", args, { cwd: repo, input, encoding: "utf8", env: cleanEnv({ GIT_AUTHOR_NAME: "alice", GIT_AUTHOR_EMAIL: "a@a", GIT_COMMITTER_NAME: "alice", GIT_COMMITTER_EMAIL: "a@a" }) });
    if (r.status !== 0) throw new Error(r.stderr);
    return r.stdout.trim();
  };
  // A record sync accepts on receive: the format marker and a valid agent declaration.
  const at = new Date().toISOString();
  const record = { agent: "alice", objective: text, worktree: null, branch: null, scope: "primary", files: [], awaits: null, session: null, heartbeat_at: at, started_at: at, ended_at: null };
  const blob = run(["hash-object", "-w", "--stdin"], JSON.stringify(record));
  const format = run(["hash-object", "-w", "--stdin"], "git-handoff 1\n");
  const tree = run(["mktree"], `100644 blob ${format}\tformat\n100644 blob ${blob}\tagent.json\n`);
  const parent = run(["for-each-ref", "--format=%(objectname)", ref]);
  const commit = run(["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", text]);
  run(["update-ref", ref, commit, ...(parent ? [parent] : [])]);
}

test("divergent writes to a non-task ref (one agent's heartbeats from two clones) both survive", async () => {
  const { bare, a, b } = project();
  writeOn(a, "refs/handoff/agents/alice", "hello from a");
  await storeSync({ cwd: a });
  await storeSync({ cwd: b });
  writeOn(a, "refs/handoff/agents/alice", "heartbeat a");
  writeOn(b, "refs/handoff/agents/alice", "heartbeat b");
  ok(cli(["sync"], { cwd: a }));
  const sb = ok(cli(["sync", "--json"], { cwd: b })).json;
  assert.equal(sb.replayed, ["refs/handoff/agents/alice"]);
  assert.equal(gitOut(bare, "log", "--format=%s", "refs/handoff/agents/alice").split("\n"), ["heartbeat b", "heartbeat a", "hello from a"]);
  assert.is(gitOut(bare, "log", "-1", "--format=%an", "refs/handoff/agents/alice"), "alice", "the writer stays the author");
});

test("fencing: a pusher whose lease expired and was taken over is refused, naming the holder", async () => {
  const { a, b } = project();
  // The scripted clock: alice's 4 s lease has run out, and the 60 s max_clock_skew a takeover
  // through the remote waits past it, when bob claims, whatever the machine's load.
  const t0 = Date.parse("2026-06-01T10:00:00Z");
  const at = (s: number) => ({ HANDOFF_NOW: new Date(t0 + s * 1000).toISOString() });
  await storeTasks({ cwd: a, agent: "lead", now: at(0).HANDOFF_NOW, push: true }, [{ id: "fenced", objective: "fenced" }]);
  await storeClaim({ cwd: a, agent: "alice", now: at(0).HANDOFF_NOW }, "fenced", { ttl: "4s" });
  const mine = ok(cli(["fence-check", "fenced", "--fence", "1", "--json"], { cwd: a, agent: "alice", env: at(1) })).json;
  assert.is(mine.verdicts[0].ok, true);
  assert.is(mine.against, "remote");
  const taken = ok(cli(["claim", "fenced", "--json"], { cwd: b, agent: "bob", env: at(65) })).json;
  assert.is(taken.claim.fence, 2);

  const stale = cli(["fence-check", "fenced", "--json"], { cwd: a, agent: "alice", env: at(66) });
  assert.is(stale.code, 3);
  assert.is(stale.json.error.data.holder, "bob");
  assert.match(stale.stderr, /held by bob/);
  const oldFence = cli(["fence-check", "fenced", "--fence", "1"], { cwd: b, agent: "bob", env: at(66) });
  assert.is(oldFence.code, 3);
  assert.match(oldFence.stderr, /fence 1 .*stale.*fence 2/);
  const ahead = cli(["fence-check", "fenced", "--fence", "3"], { cwd: b, agent: "bob", env: at(66) });
  assert.is(ahead.code, 3);
  assert.match(ahead.stderr, /fence 3 for task fenced was never granted here; the current grant is fence 2/, "a fence above the grant is not stale");
  ok(cli(["fence-check", "fenced", "--fence", "2"], { cwd: b, agent: "bob", env: at(66) }));
  assert.is(cli(["fence-check", "no-such-task"], { cwd: b, agent: "bob" }).code, 4);
  assert.is(cli(["fence-check", "../evil"], { cwd: b, agent: "bob" }).code, 2);
});

test("a renew by an agent who lost the lease becomes a conflict for that agent at sync", async () => {
  const { bare, a, b } = project();
  await storeTasks({ cwd: a, agent: "lead", push: true }, [{ id: "contested", objective: "contested" }]);
  await storeClaim({ cwd: a, agent: "alice" }, "contested");
  ok(cli(["reclaim", "contested", "--reason", "alice went quiet"], { cwd: b, agent: "bob" }));
  ok(cli(["renew", "contested"], { cwd: a, agent: "alice" })); // a's local state is stale
  const s = ok(cli(["sync", "--json"], { cwd: a })).json;
  assert.is(s.conflicts.length, 1);
  assert.is(s.conflicts[0].agent, "alice");
  assert.is(s.conflicts[0].event.type, "renewed");
  assert.is(remoteTask(bare, "contested").status, "todo");
  assert.is(remoteTask(bare, "contested").claim, null);
  assert.is(ok(cli(["sync-conflicts", "--json"], { cwd: a, agent: "alice" })).json.length, 1);
});

test("compaction moves old finished tasks into refs/handoff/archive; events still read them; other clones follow", async () => {
  const { bare, a, b } = project();
  await storeTasks({ cwd: a, agent: "lead" }, [{ id: "finished", objective: "finished" }]);
  await storeTasks({ cwd: a, agent: "lead" }, [{ id: "open", objective: "still open" }]);
  await storeDone({ cwd: a, agent: "lead" }, "finished", { note: "shipped" });
  await storeSync({ cwd: a });
  await storeSync({ cwd: b });
  assert.is(ok(cli(["compact", "--json"], { cwd: b })).json.archived.length, 0, "default retention is 7d");
  writeFileSync(`${a}/.handoff.yaml`, "retention: 1s\n");
  await new Promise((r) => setTimeout(r, 1200));

  const c = ok(cli(["compact", "--json"], { cwd: a })).json;
  assert.equal(c.archived, ["finished"]);
  assert.is(gitOut(bare, "for-each-ref", "--format=%(refname)", "refs/handoff/"), "refs/handoff/archive\nrefs/handoff/tasks/open");
  assert.is(gitOut(a, "for-each-ref", "--format=%(refname)", "refs/handoff/"), "refs/handoff/archive\nrefs/handoff/tasks/open");
  const history = ok(cli(["events", "--task", "finished", "--json"], { cwd: a })).json;
  assert.equal(history.map((e: any) => e.type), ["created", "done"]);
  assert.is(ok(cli(["events", "--json"], { cwd: a })).json.filter((e: any) => e.task === "finished").length, 2);

  const sb = ok(cli(["sync", "--json"], { cwd: b })).json;
  assert.equal(sb.removed, ["refs/handoff/tasks/finished"]);
  assert.equal(ok(cli(["events", "--task", "finished", "--json"], { cwd: b })).json.map((e: any) => e.type), ["created", "done"]);
  assert.is(ok(cli(["compact", "--json"], { cwd: a })).json.archived.length, 0, "nothing left to compact");
});

test("doctor: a line per check; a fetch refspec into refs/handoff/, an unreachable remote and clock skew are caught", async () => {
  const { bare, a } = project();
  await storeTasks({ cwd: a, agent: "lead" }, [{ id: "x", objective: "x" }]);
  await storeSync({ cwd: a });
  const healthy = ok(cli(["doctor", "--json"], { cwd: a })).json;
  assert.is(healthy.ok, true);
  assert.equal(healthy.checks.map((c: any) => c.name), ["remote", "refspecs", "store-layout", "reachability", "clock", "remote-on-disk", "received", "tentative", "loop", "invariants", "leases", "dependencies", "format", "git-hooks", "hook-path", "agent-configs", "builds", "git-locks", "handoff-locks", "objects"]);
  // No hooks are installed in this clone (doctor-checks.test.ts covers them): only those warn.
  assert.ok(healthy.checks.every((c: any) => c.status === "ok" || ["git-hooks", "hook-path", "agent-configs"].includes(c.name)));

  // This machine's clock an hour behind the remote's newest event.
  const skew = ok(cli(["doctor", "--json"], { cwd: a, env: { HANDOFF_NOW: new Date(Date.now() - 3_600_000).toISOString() } })).json;
  assert.is(skew.checks.find((c: any) => c.name === "clock").status, "warn");

  gitOut(a, "config", "--add", "remote.origin.fetch", "+refs/handoff/*:refs/handoff/*");
  const bad = cli(["doctor"], { cwd: a });
  assert.is(bad.code, 2);
  assert.match(bad.stdout, /fail refspecs/);
  assert.match(bad.stdout, /git config --unset/);
  gitOut(a, "config", "--unset", "remote.origin.fetch", "refs/handoff");

  renameSync(bare, `${bare}.away`);
  ok(cli(["claim", "x", "--offline"], { cwd: a, agent: "alice" }));
  const down = cli(["doctor", "--json"], { cwd: a });
  assert.is(down.code, 2);
  assert.is(down.json.checks.find((c: any) => c.name === "reachability").status, "fail");
  assert.match(down.json.checks.find((c: any) => c.name === "tentative").detail, /1 tentative/);
  renameSync(`${bare}.away`, bare);
});

test("sync with no remote configured, and with bad input, changes nothing", () => {
  const repo = tempRepo();
  const r = cli(["sync"], { cwd: repo });
  assert.is(r.code, 4);
  assert.match(r.stderr, /no sync remote/);
  assert.is(cli(["fence-check", "x", "y", "--fence", "1"], { cwd: repo }).code, 2);
  assert.is(cli(["fence-check", "x", "--fence", "abc"], { cwd: repo }).code, 2);
  assert.is(handoffRefs(repo), "");
});

test("a remote of another object format (SHA-256) is named as such, not as unreachable; nothing is written there", async () => {
  const repo = tempRepo();
  const bare = join(tempDir(), "sha256.git");
  gitOut(repo, "init", "-q", "--bare", "--object-format=sha256", bare);
  gitOut(repo, "remote", "add", "origin", bare);
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "t1", objective: "x" }]);
  for (const args of [["sync"], ["claim", "t1", "--push"]]) {
    const r = cli([...args, "--json"], { cwd: repo, agent: "alice" });
    assert.is(r.code, 3, `${args.join(" ")}: ${r.stderr}`);
    assert.is(r.json.error.code, "remote_rejected");
    assert.match(r.json.error.message, /uses another object format \(hash algorithm\) than this repository/);
    assert.not.match(JSON.stringify(r.json.error.suggestions), /network|--offline/);
  }
  assert.is(gitOut(bare, "for-each-ref", "refs/handoff"), "");
});

test.run();
