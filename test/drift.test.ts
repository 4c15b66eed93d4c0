// Drift from the declaration, end to end: two agents in linked worktrees, the real hook and CLI.
// An edit outside what an agent declared gives one notice and one event and shows in `status`
// (and so do its commits and uncommitted files, which a heartbeat records too; claims that look
// stuck are in drift-stuck.test.ts).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { declarationOf, undeclaredPaths } from "../src/core/declaration.ts";
import type { Lease } from "../src/core/lease.ts";
import { buildSnapshot } from "../src/dashboard/snapshot.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { cleanEnv, cleanupTemp, cli, gitOut, type CliResult } from "./support/repo.ts";
import { storeClaim, storeLease, storeSession, storeTasks } from "./support/seed.ts";
import { team, type Team } from "./support/team.ts";

test.after(cleanupTemp);

function ok(r: CliResult, what = "command"): CliResult {
  assert.is(r.code, 0, `${what}: ${r.stderr}`);
  return r;
}

function edit(t: Team, agent: string, file: string, env: NodeJS.ProcessEnv = {}): string {
  const dir = t.wt[agent]!;
  const payload = { session_id: `s-${agent}`, hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { file_path: join(dir, file), content: "x\n" }, cwd: dir };
  const r = ok(cli(["hook", "claude-pre-tool-use"], { cwd: dir, agent, input: JSON.stringify(payload), env }), "hook");
  return r.json?.hookSpecificOutput?.additionalContext ?? "";
}

/** Each agent's `session start` in its worktree, written in-process (support/seed.ts). */
async function declaredTeam(): Promise<Team> {
  const t = team(["alice", "bob", "carol"]);
  await storeSession({ cwd: t.wt.alice!, agent: "alice" }, "the api", { files: ["src/api/**"] });
  await storeSession({ cwd: t.wt.bob!, agent: "bob" }, "the ui", { files: ["src/ui/**"] });
  // carol declares nothing: no files, no task, no lease.
  await storeSession({ cwd: t.wt.carol!, agent: "carol" }, "looking around");
  return t;
}

test("an edit outside the declaration: one notice, one event, shown in status; inside it or undeclared agents: nothing", async () => {
  const t = await declaredTeam();
  const first = edit(t, "bob", "docs/readme.md");
  assert.match(first, /^git-handoff notice: docs\/readme\.md is outside what you declared \(src\/ui\/\*\*\); not blocked, recorded\./);
  assert.not.match(edit(t, "bob", "docs/readme.md"), /notice/, "once per agent and path");
  assert.is(edit(t, "bob", "src/ui/app.ts"), "", "inside the declaration");
  assert.is(edit(t, "carol", "anything/at/all.txt"), "", "no declaration, nothing to drift from");

  const events = ok(t.as("bob", ["events", "--type", "undeclared_edit", "--json"])).json;
  assert.is(events.length, 1);
  assert.is(events[0].agent, "bob");
  assert.equal(events[0].paths, ["docs/readme.md"]);
  assert.match(ok(t.as("bob", ["events", "--type", "undeclared_edit"])).stdout, /^\S+  undeclared_edit  -  bob  paths=docs\/readme\.md  \[/m, "the text line names the path");

  const status = ok(t.as("alice", ["status", "--json", "--no-conflicts"])).json;
  assert.equal(status.drift.agents.map((a: { agent: string; undeclared: string[] }) => [a.agent, a.undeclared]), [["bob", ["docs/readme.md"]]]);
  assert.match(ok(t.as("alice", ["status", "--no-conflicts"])).stdout, /undeclared \(changed outside what the agent declared\)\n {2}bob {2}docs\/readme\.md {2}\(declared src\/ui\/\*\*\)/);
  const stats = ok(t.as("alice", ["stats", "--json"])).json;
  assert.equal(stats.drift, { notices: 1, paths: 1, agents: 1 });
  assert.match(ok(t.as("alice", ["stats"])).stdout, /undeclared edits +1 notice \(1 path outside a declaration, 1 agent\)/);
});

test("the dashboard's snapshot carries the same drift", async () => {
  const t = await declaredTeam();
  edit(t, "bob", "docs/readme.md");
  const store = await openSyncedStore({ cwd: t.repo, agent: "lead", env: cleanEnv() });
  try {
    const snap = await buildSnapshot(store, { merges: new Map(), commits: new Map(), lastSync: null }, true);
    assert.equal(snap.drift.agents.map((a) => [a.agent, a.undeclared]), [["bob", ["docs/readme.md"]]]);
    assert.equal(snap.drift.stuck, []);
  } finally {
    store.close();
  }
});

test("status sees what git sees without any hook: committed on the branch and uncommitted in the worktree", async () => {
  const t = await declaredTeam();
  mkdirSync(join(t.wt.alice!, "lib"), { recursive: true });
  writeFileSync(join(t.wt.alice!, "lib", "helper.ts"), "export {};\n");
  gitOut(t.wt.alice!, "add", "lib/helper.ts");
  gitOut(t.wt.alice!, "commit", "-q", "-m", "a helper outside src/api");
  mkdirSync(join(t.wt.alice!, "src", "api"), { recursive: true });
  writeFileSync(join(t.wt.alice!, "src", "api", "users.ts"), "declared\n");
  writeFileSync(join(t.wt.alice!, "notes.txt"), "scratch\n");
  const status = ok(t.as("bob", ["status", "--json", "--no-conflicts"])).json;
  const alice = status.drift.agents.find((a: { agent: string }) => a.agent === "alice");
  assert.ok(alice, JSON.stringify(status.drift));
  assert.equal([...alice.undeclared].sort(), ["lib/helper.ts", "notes.txt"]);
  assert.is(alice.count, 2);
});

test("an explicit heartbeat records the agent's undeclared worktree changes once, so other clones see them", async () => {
  const t = await declaredTeam();
  writeFileSync(join(t.wt.bob!, "notes.txt"), "scratch\n");
  ok(t.as("bob", ["heartbeat"]));
  ok(t.as("bob", ["heartbeat"]));
  const events = ok(t.as("alice", ["events", "--type", "undeclared_edit", "--json"])).json;
  assert.equal(events.map((e: { agent: string; paths: string[] }) => [e.agent, e.paths]), [["bob", ["notes.txt"]]]);
  // The agent itself was not told yet: its first hook edit of the file still gets the notice.
  assert.match(edit(t, "bob", "notes.txt"), /^git-handoff notice: notes\.txt is outside what you declared/);
});

test("a claimed task's scope and a deliberate lease declare; a lease taken by a first edit does not", async () => {
  const t = await declaredTeam();
  const bob = { cwd: t.wt.bob!, agent: "bob" };
  await storeTasks(bob, [{ id: "lib", objective: "the library", scope: ["lib/**"] }]);
  await storeClaim(bob, "lib");
  await storeLease(bob, ["config/app.json"]);
  assert.is(edit(t, "bob", "lib/x.ts"), "");
  assert.is(edit(t, "bob", "config/app.json"), "");
  // Pure: an auto lease is no declaration.
  const now = new Date("2030-01-01T00:00:00Z");
  const lease = (pattern: string, auto: boolean): Lease => ({ pattern, agent: "bob", task: null, exclusive: false, acquired_at: now.toISOString(), expires_at: "2030-01-01T01:00:00.000Z", ttl_ms: 3_600_000, reason: null, ...(auto ? { auto: true } : {}), worktree: null, branch: null, scope: "ephemeral" });
  const d = declarationOf("bob", null, [], [lease("a.ts", true), lease("b.ts", false)], now);
  assert.equal(d?.globs, ["b.ts"]);
  assert.equal(undeclaredPaths(d, ["a.ts", "b.ts"]), ["a.ts"]);
  assert.is(declarationOf("bob", null, [], [lease("a.ts", true)], now), null);
});

test.run();
