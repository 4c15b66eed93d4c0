// Dependencies made in one clone and not pushed yet ride along with any push of their task's ref,
// not only sync's: an exclusive write, a write under --push, a renewal queued under the push
// budget. Each meets the remote's graph as at sync, so two clones cannot close a cycle that way.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Store } from "../src/store/store.ts";
import { claim, renew } from "../src/store/task-actions.ts";
import { taskRef } from "../src/store/task-store.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { flushPending, queuedRefs } from "../src/sync/pending-push.ts";
import { inProcess, type McpHandle } from "./support/mcp.ts";
import { cleanupTemp, cli, gitOut } from "./support/repo.ts";
import { cloneOf, emptyRemote } from "./support/servers.ts";
import { storeSync, storeTasks } from "./support/seed.ts";

const open: McpHandle[] = [];
const stores: Store[] = [];
test.after(async () => {
  for (const h of open) await h.close();
  for (const s of stores) s.close();
  cleanupTemp();
});

const ok = (r: ReturnType<typeof cli>) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r;
};

const remoteTask = (bare: string, id: string) => JSON.parse(gitOut(bare, "show", `refs/handoff/tasks/${id}:task.json`));

/**
 * X, Y and Z in both clones (made at `o.setup`'s HANDOFF_NOW); then `o.between`; then alice (clone a)
 * makes X wait on Y here only, and bob (clone b) pushes Y waits on X at once (under `o.edges`).
 */
function halfACycleEach(o: { setup?: NodeJS.ProcessEnv; edges?: NodeJS.ProcessEnv; between?: (a: string) => Promise<void> } = {}) {
  const now = o.setup?.HANDOFF_NOW;
  const bare = emptyRemote();
  const p = { bare, a: cloneOf(bare), b: cloneOf(bare) };
  return (async () => {
    await storeTasks({ cwd: p.a, agent: "lead", now }, ["X", "Y", "Z"].map((id) => ({ id, objective: id })));
    await storeSync({ cwd: p.a, now });
    await storeSync({ cwd: p.b, now });
    await o.between?.(p.a);
    ok(cli(["depend", "X", "--on", "Y"], { cwd: p.a, agent: "alice", env: o.edges ?? {} }));
    ok(cli(["depend", "Y", "--on", "X", "--push"], { cwd: p.b, agent: "bob", env: o.edges ?? {} }));
    assert.equal(remoteTask(p.bare, "Y").after, ["X"]);
    return p;
  })();
}

/** No cycle on the remote, before sync or after; alice's edge is a `cycle` conflict; both clones agree. */
function noCycleLanded(p: { bare: string; a: string; b: string }, env: NodeJS.ProcessEnv = {}) {
  for (let round = 0; round < 2; round++) {
    assert.not.ok((remoteTask(p.bare, "X").after ?? []).includes("Y"), "the closing edge never reached the remote");
    assert.equal(remoteTask(p.bare, "Y").after, ["X"]);
    if (round === 0) for (const clone of [p.a, p.b]) ok(cli(["sync"], { cwd: clone, env }));
  }
  const conflicts = ok(cli(["sync-conflicts", "--json"], { cwd: p.a, agent: "alice", env })).json;
  assert.equal(conflicts.map((c: { code: string; task: string }) => [c.code, c.task]), [["cycle", "X"]]);
  for (const clone of [p.a, p.b]) ok(cli(["doctor"], { cwd: clone, env }));
}

test("an exclusive write through the remote carrying a dependency made here lays it on the remote's graph first: the edge closing a cycle is dropped, the claim lands", async () => {
  const p = await halfACycleEach();
  const claim = ok(cli(["claim", "X", "--force", "--json"], { cwd: p.a, agent: "alice" }));
  assert.is(claim.json.claim.agent, "alice");
  assert.is(remoteTask(p.bare, "X").claim.agent, "alice");
  noCycleLanded(p);
});

test("depend --push carrying an earlier dependency made here: the one closing a cycle is dropped, the new one lands", async () => {
  const p = await halfACycleEach();
  ok(cli(["depend", "X", "--on", "Z", "--push"], { cwd: p.a, agent: "alice" }));
  assert.equal(remoteTask(p.bare, "X").after, ["Z"]);
  noCycleLanded(p);
});

test("MCP under HANDOFF_PUSH=1: a depend that carries an earlier dependency made here cannot close a cycle on the remote", async () => {
  const p = await halfACycleEach();
  const alice = await inProcess(p.a, { agent: "alice", env: { HANDOFF_PUSH: "1" } });
  open.push(alice);
  await alice.ok("depend", { id: "X", on: "Z" });
  assert.equal(remoteTask(p.bare, "X").after, ["Z"]);
  noCycleLanded(p);
});

test("a renewal queued under the push budget that carries a dependency made here stays for sync; neither its flush nor a grant carrying the queue sends it", async () => {
  const T0 = Date.parse("2026-03-01T10:00:00Z");
  const at = (sec: number) => ({ HANDOFF_NOW: new Date(T0 + sec * 1000).toISOString() });
  const storeAt = async (cwd: string, sec: number) => {
    const s = await openSyncedStore({ cwd, agent: "w@m1", env: { ...process.env, ...at(sec) } });
    s.syncOptions = { ...s.syncOptions, push: true };
    stores.push(s);
    return s;
  };
  const between = async (a: string) => {
    gitOut(a, "config", "handoff.maxPushesPerMinute", "1");
    await claim(await storeAt(a, 10), "X", { ttl: "30m" }); // pushed at once: the minute's one push
  };
  const p = await halfACycleEach({ setup: at(-120), edges: at(15), between });
  const s = await storeAt(p.a, 20);
  await renew(s, "X", { defer: true });
  assert.equal(queuedRefs(s, "origin"), [taskRef("X")], "queued: the budget is spent");
  const later = await storeAt(p.a, 80);
  assert.is((await flushPending(later, "origin")).kind, "none");
  await claim(later, "Z", { ttl: "30m" });
  assert.is(remoteTask(p.bare, "Z").claim.agent, "w@m1");
  noCycleLanded(p, at(90));
});

test.run();
