// Results the published output schemas must admit, on branches no other MCP test reaches. The test
// clients check every result against the listed schemas (test/support/mcp.ts), as the SDK's client
// does: every object there is closed (`additionalProperties: false`), so a field a branch returns
// and its schema lacks fails the whole call with MCP error -32602, and the agent never sees the answer.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { inProcess, type McpHandle } from "./support/mcp.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { cloneOf, serveRoot } from "./support/servers.ts";

const open: McpHandle[] = [];
test.after.each(async () => {
  for (const h of open.splice(0)) await h.close();
});
test.after(cleanupTemp);

/** HANDOFF_NOW at `ms`: a one-minute claim taken at T expires at T + 1m; another clone's stands for the 60 s takeover grace until T + 2m. */
const at = (ms: number) => ({ HANDOFF_NOW: new Date(ms).toISOString() });
const T = Date.parse("2026-11-30T09:00:00.000Z");
const INSIDE = T + 90_000;

/** A bare remote holding one commit on main, and two clones of it. */
function twoClones(name: string): { a: string; b: string } {
  const bare = serveRoot().bare(name);
  gitOut(tempRepo(), "push", "-q", bare, "main");
  return { a: cloneOf(bare), b: cloneOf(bare) };
}

test("sync: a remote holding coordination refs in the other namespace answers `split`, as `sync --json` does", async () => {
  const { a, b } = twoClones("split");
  assert.is(cli(["remote", "origin", "--ref-prefix", "refs/heads/handoff/"], { cwd: a }).code, 0);
  assert.is(cli(["task", "add", "theirs", "--id", "theirs", "--push"], { cwd: a, agent: "lead" }).code, 0);
  const bob = await inProcess(b, { agent: "bob" });
  open.push(bob);
  const r = await bob.call("sync");
  assert.not.ok(r.isError, JSON.stringify(r.content));
  assert.equal((r.structuredContent as any).split, { prefix: "refs/handoff/", namespace: "refs/heads/handoff/", tasks: 1, leases: false });
  assert.match((r.content[0] as { text: string }).text, /warning: origin also holds coordination refs under refs\/heads\/handoff\/ \(1 task ref\(s\)\)/);
});

test("wait_task and complete_task on a verification still running: the task as it stands now, another clone's claim inside the takeover grace with `grace_until`", async () => {
  const { a, b } = twoClones("grace");
  // The verification waits for a file the test writes: no timing assumption, only a gate (and a
  // bound of a minute, so a failed test leaves no shell looping behind).
  const gate = join(a, "go");
  const verify = `i=0; while [ ! -f ${gate} ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; echo passed`;
  assert.is(cli(["task", "add", "shared", "--id", "t", "--verify", verify, "--push"], { cwd: a, agent: "lead", env: at(T) }).code, 0);
  const alice = await inProcess(a, { agent: "alice", env: at(INSIDE), waitBoundMs: 200 });
  open.push(alice);
  // Nobody holds it: anyone may finish it. The verification outlasts the call.
  assert.is((await alice.ok("complete_task", { id: "t" })).state, "verifying");
  // Meanwhile bob, in the other clone, claims it for a minute from T; alice's clone syncs at T + 90 s.
  assert.is(cli(["sync"], { cwd: b, agent: "bob", env: at(T) }).code, 0);
  assert.is(cli(["claim", "t", "--ttl", "1m", "--push"], { cwd: b, agent: "bob", env: at(T) }).code, 0);
  assert.is(cli(["sync"], { cwd: a, agent: "alice", env: at(INSIDE) }).code, 0);
  const r = await alice.call("wait_task", { id: "t", timeout_seconds: 0 });
  assert.not.ok(r.isError, JSON.stringify(r.content));
  const w = r.structuredContent as any;
  assert.is(w.state, "verifying");
  assert.is(w.task.claim.agent, "bob");
  assert.is(w.task.grace_until, new Date(T + 120_000).toISOString());
  // complete_task again meanwhile starts nothing new and answers the same way.
  const again = await alice.call("complete_task", { id: "t" });
  assert.not.ok(again.isError, JSON.stringify(again.content));
  assert.is((again.structuredContent as any).state, "verifying");
  assert.is((again.structuredContent as any).task.grace_until, new Date(T + 120_000).toISOString());
  // The verdict, once the command ends: refused, as bob holds the task now.
  writeFileSync(gate, "");
  let end: any;
  for (let i = 0; i < 200 && !end?.isError; i++) end = await alice.call("wait_task", { id: "t", timeout_seconds: 0.1 });
  assert.is(end.structuredContent.error.code, "held_by_other", JSON.stringify(end.content));
});

test.run();
