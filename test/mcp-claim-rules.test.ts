// MCP claims follow the CLI's claim rules: the overlap advisory comes back in structuredContent,
// capacity is enforced (at_capacity, recoverable by finishing work or over_capacity: true).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { inProcess, overStdio, type McpHandle } from "./support/mcp.ts";
import { cleanupTemp, tempRepo } from "./support/repo.ts";

const open: McpHandle[] = [];
test.after(async () => {
  for (const h of open) await h.close();
  cleanupTemp();
});

async function agent(repo: string, name: string): Promise<McpHandle> {
  const h = await inProcess(repo, { agent: name });
  open.push(h);
  return h;
}

test("claim_task reports overlaps with other live work (warn for the same file, info otherwise), never a block", async () => {
  const repo = tempRepo();
  const alice = await agent(repo, "alice");
  const bob = await agent(repo, "bob");
  await alice.ok("create_task", { objective: "the shared module", id: "shared", scope: ["src/shared/**"] });
  await alice.ok("create_task", { objective: "one file in it", id: "one", scope: ["src/shared/a.ts"] });
  await alice.ok("claim_task", { id: "shared" });
  const r = await bob.ok("claim_task", { id: "one" });
  assert.is(r.task.claim.agent, "bob", "an overlap does not block");
  assert.equal(r.overlaps.map((o: any) => [o.task, o.agent, o.verdict]), [["shared", "alice", "info"]]);
  assert.match(r.summary, /overlaps info src\/shared/);
});

test("claim_next refuses past capacity (at_capacity); over_capacity: true takes one more", async () => {
  const repo = tempRepo();
  const carol = await agent(repo, "carol");
  for (const id of ["t1", "t2"]) await carol.ok("create_task", { objective: `work ${id}`, id });
  await carol.ok("claim_next");
  const refused = await carol.refused("claim_next");
  assert.is(refused.code, "at_capacity");
  assert.not.match(JSON.stringify(refused.suggestions), /git handoff/, "suggestions name tools, not CLI commands");
  const more = await carol.ok("claim_next", { over_capacity: true });
  assert.is(more.task.claim.agent, "carol");
});

test("two servers of one agent claiming at the same moment: capacity holds (one granted, the other at_capacity)", async () => {
  const repo = tempRepo();
  const one = await overStdio(repo, { agent: "dana" });
  const two = await overStdio(repo, { agent: "dana" });
  open.push(one, two);
  for (let round = 0; round < 3; round++) {
    const ids = [`p${round}a`, `p${round}b`];
    for (const id of ids) await one.ok("create_task", { objective: `work ${id}`, id });
    const answers = await Promise.allSettled([one.ok("claim_task", { id: ids[0] }), two.ok("claim_task", { id: ids[1] })]);
    const granted = answers.filter((a) => a.status === "fulfilled") as PromiseFulfilledResult<{ task: { id: string } }>[];
    assert.is(granted.length, 1, `round ${round}: ${answers.map((a) => (a.status === "fulfilled" ? "granted" : String(a.reason))).join(" | ")}`);
    assert.match(String((answers.find((a) => a.status === "rejected") as PromiseRejectedResult).reason), /at_capacity/);
    await one.ok("release_task", { id: granted[0]!.value.task.id });
  }
});

test.run();
