// The review gate through MCP: complete_task runs the task's verification as `done` does, over a
// real SDK client on stdio. A verification slower than the call's bound goes on in a detached
// runner; wait_task reports its verdict.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { inProcess, overStdio, type McpHandle } from "./support/mcp.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { commitFile, team } from "./support/team.ts";

const open: McpHandle[] = [];
async function server(repo: string, agent: string, args: string[] = []): Promise<McpHandle> {
  const h = await overStdio(repo, { agent, args });
  open.push(h);
  return h;
}
test.after.each(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});
test.after(cleanupTemp);

const eventTypes = (repo: string, id: string) => gitOut(repo, "log", "--format=%s", `refs/handoff/tasks/${id}`).split("\n");

test("a passing verification sends the task to review; a reviewer accepts it through review_queue / accept_review", async () => {
  const repo = tempRepo();
  const alice = await server(repo, "alice");
  const created = await alice.ok("create_task", { objective: "lexer", id: "lexer", verify: "echo 12 tests passed", priority: 3 });
  assert.is(created.task.verify, "echo 12 tests passed");
  assert.is(typeof created.summary, "string");
  await alice.ok("claim_task", { id: "lexer" });
  const r = await alice.ok("complete_task", { id: "lexer", commit: "HEAD", note: "tokens done" });
  assert.is(r.state, "review");
  assert.is(r.final, true);
  assert.is(r.task.status, "review");
  assert.is(r.verification.passed, true);
  assert.match(r.verification.output_tail, /12 tests passed/);
  assert.match(r.summary, /lexer is in review/);
  assert.ok(r.next.some((n: any) => n.tool === "claim_next"));

  const bob = await server(repo, "bob");
  const queue = await bob.ok("review_queue");
  assert.is(queue.total, 1);
  assert.is(queue.items[0].task, "lexer");
  assert.is(queue.items[0].submitted_by, "alice");
  assert.equal(queue.next[0], { tool: "accept_review", arguments: { id: "lexer" }, why: "accept it: it becomes done" });
  const accepted = await bob.ok("accept_review", { id: "lexer", reason: "looks right" });
  assert.is(accepted.task.status, "done");
  assert.is(accepted.task.review.decision.by, "bob");
  const again = await bob.refused("accept_review", { id: "lexer" });
  assert.is(again.code, "wrong_state");
  assert.match(again.suggestions[0].detail, /review_queue/);
  assert.not.match(again.suggestions[0].detail, /git handoff/);
  // the same story as the CLI writes it
  assert.equal(eventTypes(repo, "lexer").map((s) => s.split(" ")[0]), ["accepted", "submitted", "claimed", "created"]);

  // reject_review: back to todo with the reason, which the next claimer reads
  await alice.ok("create_task", { objective: "lexer docs", id: "lexdocs", verify: "true" });
  await alice.ok("claim_task", { id: "lexdocs" });
  assert.is((await alice.ok("complete_task", { id: "lexdocs" })).state, "review");
  const rejected = await bob.ok("reject_review", { id: "lexdocs", reason: "document the escapes" });
  assert.is(rejected.task.status, "todo");
  assert.is(rejected.task.result.reason, "document the escapes");
  assert.match(rejected.summary, /rejected lexdocs: back to todo/);
  assert.is((await bob.ok("review_queue")).total, 0);
  assert.is(cli(["task", "show", "lexdocs", "--json"], { cwd: repo, agent: "x" }).json.review.decision.verdict, "rejected");
  assert.is((await bob.refused("reject_review", { id: "lexdocs", reason: "again" })).code, "wrong_state");
});

test("a failing verification is refused with verification_failed and the output tail; the task stays with its agent", async () => {
  const repo = tempRepo();
  const alice = await server(repo, "alice");
  await alice.ok("create_task", { objective: "parser", id: "parser", verify: "echo 2 failing; exit 7" });
  await alice.ok("claim_task", { id: "parser" });
  const err = await alice.refused("complete_task", { id: "parser", commit: "HEAD" });
  assert.is(err.code, "verification_failed");
  assert.is(err.data.verification.exit_code, 7);
  assert.match(err.data.verification.output_tail, /2 failing/);
  assert.match(err.suggestions[0].detail, /complete_task \{"id": "parser"\}/);
  assert.not.match(JSON.stringify(err.suggestions), /git handoff/);
  const t = (await alice.ok("get_task", { id: "parser" })).task;
  assert.is(t.status, "claimed");
  assert.is(t.claim.agent, "alice");
  assert.is(t.review.verification.passed, false);
  // the CLI refuses the same way, with its own wording of the same suggestion
  const viaCli = cli(["done", "parser", "--json"], { cwd: repo, agent: "alice" });
  assert.is(viaCli.code, 3);
  assert.is(viaCli.json.error.code, "verification_failed");
  assert.match(viaCli.json.error.suggestions[0].detail, /git handoff done parser/);
});

test("a task without a verify command is done; refusals of complete_task name tools", async () => {
  const repo = tempRepo();
  const alice = await server(repo, "alice");
  const bob = await server(repo, "bob");
  await alice.ok("create_task", { objective: "docs", id: "docs" });
  await alice.ok("claim_task", { id: "docs" });
  const held = await bob.refused("complete_task", { id: "docs" });
  assert.is(held.code, "held_by_other");
  assert.is(held.data.holder, "alice");
  assert.ok(held.suggestions.some((s: any) => /claim_next/.test(s.detail)));
  const r = await alice.ok("complete_task", { id: "docs" });
  assert.is(r.state, "done");
  assert.is(r.task.status, "done");
  assert.is(r.final, true);
});

test("a refusal from the store's verification surfaces as it is (the runner's refusal, not a verdict)", async () => {
  const repo = tempRepo();
  const alice = await server(repo, "alice");
  const bob = await server(repo, "bob");
  await alice.ok("create_task", { objective: "gated", id: "gated", verify: "true" });
  await alice.ok("claim_task", { id: "gated" });
  const held = await bob.refused("complete_task", { id: "gated" });
  assert.is(held.code, "held_by_other");
  assert.is(held.data.holder, "alice");
  assert.not.match(JSON.stringify(held.suggestions), /git handoff/);
  assert.is((await alice.ok("complete_task", { id: "gated" })).state, "review");
  const inReview = await alice.refused("complete_task", { id: "gated" });
  assert.is(inReview.code, "wrong_state");
  assert.match(JSON.stringify(inReview.suggestions), /accept_review/);
});

test("in-process (no runner entry) the server runs the verification itself, with the same answers", async () => {
  const repo = tempRepo();
  const h = await inProcess(repo, { agent: "alice", waitBoundMs: 20_000 });
  open.push(h);
  await h.ok("create_task", { objective: "t", id: "t", verify: "echo ok" });
  await h.ok("claim_task", { id: "t" });
  const r = await h.ok("complete_task", { id: "t" });
  assert.is(r.state, "review");
  assert.match(r.verification.output_tail, /ok/);
});

test("the verification runs in the agent's own worktree, as done does there", async () => {
  const t = team(["alice"]);
  commitFile(t.wt.alice!, "only-here.txt", "alice's work\n");
  const alice = await server(t.wt.alice!, "alice", ["--wait-max", "20s"]);
  await alice.ok("create_task", { objective: "wt", id: "wt", verify: "test -f only-here.txt && git rev-parse --abbrev-ref HEAD" });
  await alice.ok("claim_task", { id: "wt" });
  const r = await alice.ok("complete_task", { id: "wt", commit: "HEAD" });
  assert.is(r.state, "review");
  assert.is(r.verification.cwd, t.wt.alice);
  assert.match(r.verification.output_tail, /alice-work/);
  assert.is(r.task.review.commit, gitOut(t.wt.alice!, "rev-parse", "HEAD"));
});

test("a slow verification returns at once as verifying; wait_task reports final: false, then the verdict", async () => {
  const repo = tempRepo();
  const alice = await server(repo, "alice", ["--wait-max", "1s"]);
  // The verification waits for a file the test writes: no timing assumption, only a gate.
  const gate = join(repo, "go");
  await alice.ok("create_task", { objective: "slow", id: "slow", verify: `while [ ! -f ${gate} ]; do sleep 0.1; done; echo slow suite passed` });
  await alice.ok("claim_task", { id: "slow" });
  const r = await alice.ok("complete_task", { id: "slow", commit: "HEAD" });
  assert.is(r.state, "verifying");
  assert.is(r.final, false);
  assert.is(r.task.status, "claimed");
  assert.equal(r.next[0].tool, "wait_task");
  assert.match(r.summary, /slow is verifying/);
  const still = await alice.ok("wait_task", { id: "slow" });
  assert.is(still.final, false);
  assert.is(still.state, "verifying");
  // A second complete_task while it runs starts nothing new.
  const twice = await alice.ok("complete_task", { id: "slow" });
  assert.is(twice.state, "verifying");
  assert.is(twice.run.pid, r.run.pid);

  writeFileSync(gate, "");
  let verdict: any;
  for (let i = 0; i < 120 && !verdict?.final; i++) verdict = await alice.ok("wait_task", { id: "slow" });
  assert.is(verdict.final, true);
  assert.is(verdict.state, "review");
  assert.is(verdict.task.status, "review");
  assert.match(verdict.verification.output_tail, /slow suite passed/);
  // Once reported, wait_task is the plain wait again: review is not final, so it times out.
  const plain = await alice.ok("wait_task", { id: "slow", timeout_seconds: 0 });
  assert.is(plain.final, false);
  assert.is(plain.state, undefined);
});

test("the detached runner outlives the server: its verdict reaches the task ref after the client is gone", async () => {
  const repo = tempRepo();
  const gate = join(repo, "go");
  const alice = await server(repo, "alice", ["--wait-max", "1s"]);
  await alice.ok("create_task", { objective: "long", id: "long", verify: `while [ ! -f ${gate} ]; do sleep 0.1; done; exit 4` });
  await alice.ok("claim_task", { id: "long" });
  assert.is((await alice.ok("complete_task", { id: "long" })).state, "verifying");
  await open.splice(0)[0]!.close();
  writeFileSync(gate, "");
  let t: any;
  for (let i = 0; i < 200; i++) {
    t = cli(["task", "show", "long", "--json"], { cwd: repo, agent: "alice" }).json;
    if (t?.review?.verification) break;
    await new Promise((res) => setTimeout(res, 100));
  }
  assert.is(t.review.verification.exit_code, 4);
  assert.is(t.status, "claimed");
  // A new server for the same agent reports the verdict it missed.
  const again = await server(repo, "alice");
  const err = await again.refused("wait_task", { id: "long" });
  assert.is(err.code, "verification_failed");
  assert.ok(existsSync(join(repo, ".git", "handoff", "verification-runs", "long.json")));
});

test.run();
