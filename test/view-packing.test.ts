// Views pack the clone's refs once enough loose handoff refs piled up (view-packing.ts): after
// `status`, `events` or `stats` in a clone with PACK_LOOSE_AT or more loose refs under
// refs/handoff/, they are in packed-refs, every ref keeps its value and the view answers the same.
// Below the threshold nothing is packed.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { PACK_LOOSE_AT } from "../src/sync/pack-refs.ts";
import { cleanupTemp, cli, gitOut, handoffRefs } from "./support/repo.ts";
import { fixtureNow, viewsRepo, type ViewsFixture } from "./support/views-fixture.ts";

test.after(cleanupTemp);

/** Loose ref files under refs/handoff/. */
function looseRefs(repo: string): number {
  let n = 0;
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else n++;
    }
  };
  walk(join(repo, ".git/refs/handoff"));
  return n;
}

function packedHandoffRefs(repo: string): number {
  const file = join(repo, ".git/packed-refs");
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((l) => l.includes(" refs/handoff/")).length : 0;
}

function fixture(f: ViewsFixture): { repo: string; env: NodeJS.ProcessEnv } {
  const repo = viewsRepo(f);
  return { repo, env: { HANDOFF_NOW: fixtureNow(f) } };
}

const view = (repo: string, env: NodeJS.ProcessEnv, args: string[]) => {
  const r = cli([...args, "--json"], { cwd: repo, agent: "agent-000", env });
  assert.is(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
  return r.json;
};

for (const args of [["status"], ["events", "--agent", "agent-001", "--limit", "5"], ["stats"]]) {
  test(`${args[0]} packs the refs once ${PACK_LOOSE_AT} loose handoff refs piled up, and answers the same after`, () => {
    const { repo, env } = fixture({ tasks: PACK_LOOSE_AT + 20, agents: 4, events: 2 * (PACK_LOOSE_AT + 20) });
    const before = handoffRefs(repo, { logs: true });
    assert.ok(looseRefs(repo) >= PACK_LOOSE_AT, "the fixture writes loose refs");
    const first = view(repo, env, args);
    assert.ok(looseRefs(repo) < 5, `loose refs left: ${looseRefs(repo)}`);
    assert.ok(packedHandoffRefs(repo) >= PACK_LOOSE_AT);
    // Only where the refs are kept changed (a heartbeat may have moved the caller's own ref).
    const after = handoffRefs(repo, { logs: true });
    const moved = (a: string) => a.split("\n").filter((l) => !l.startsWith("refs/handoff/agents/agent-000 "));
    assert.equal(moved(after), moved(before));
    assert.equal(view(repo, env, args), first);
  });
}

test("packing writes a commit-graph layer of the handoff commits (git verifies it and uses it), none when commit-graphs are off", () => {
  const { repo, env } = fixture({ tasks: PACK_LOOSE_AT + 20, agents: 4, events: 2 * (PACK_LOOSE_AT + 20) });
  const off = fixture({ tasks: PACK_LOOSE_AT + 20, agents: 4, events: 2 * (PACK_LOOSE_AT + 20) });
  gitOut(off.repo, "config", "core.commitGraph", "false");
  view(repo, env, ["status"]);
  view(off.repo, off.env, ["status"]);
  const chain = join(repo, ".git/objects/info/commit-graphs/commit-graph-chain");
  assert.ok(existsSync(chain), "a split commit-graph");
  gitOut(repo, "commit-graph", "verify");
  // A task's commit is in it: git reads its generation from the graph.
  const tip = gitOut(repo, "for-each-ref", "--count=1", "--format=%(objectname)", "refs/handoff/tasks/");
  const graphs = readdirSync(join(repo, ".git/objects/info/commit-graphs")).filter((f) => f.endsWith(".graph"));
  assert.ok(graphs.length >= 1);
  assert.ok(graphs.some((g) => readFileSync(join(repo, ".git/objects/info/commit-graphs", g)).includes(Buffer.from(tip, "hex"))), "the task's commit is in the graph");
  assert.not.ok(existsSync(join(off.repo, ".git/objects/info/commit-graphs")));
  assert.not.ok(existsSync(join(off.repo, ".git/objects/info/commit-graph")));
});

test(`a claim whose capacity check read ${PACK_LOOSE_AT} loose task refs packs them after it answered; the next claim reads packed refs`, () => {
  const { repo, env } = fixture({ tasks: PACK_LOOSE_AT + 20, agents: 4, events: 8 });
  // Every fourth task of the fixture is still to do (views-fixture.ts).
  const todo = ["t-00000", "t-00004"];
  assert.ok(looseRefs(repo) >= PACK_LOOSE_AT, "the fixture writes loose refs");
  const before = handoffRefs(repo, { logs: true });
  const claimed = cli(["claim", todo[0]!, "--over-capacity", "--json"], { cwd: repo, agent: "newcomer", env });
  assert.is(claimed.code, 0, claimed.stderr);
  assert.is(claimed.json.claim.agent, "newcomer");
  assert.ok(looseRefs(repo) < 10, `loose refs left: ${looseRefs(repo)}`);
  assert.ok(packedHandoffRefs(repo) >= PACK_LOOSE_AT);
  // Every ref but the claimed task's, the lease set and the claimer's own kept its value.
  const mine = (l: string) => l.startsWith(`refs/handoff/tasks/${todo[0]} `) || l.startsWith("refs/handoff/leases ") || l.startsWith("refs/handoff/agents/newcomer ");
  const keep = (a: string) => a.split("\n").filter((l) => !mine(l));
  assert.equal(keep(handoffRefs(repo, { logs: true })), keep(before));
  const next = cli(["claim", todo[1]!, "--over-capacity", "--json"], { cwd: repo, agent: "newcomer", env });
  assert.is(next.code, 0, next.stderr);
  assert.is(next.json.id, todo[1]);
});

test("a view leaves fewer loose refs than the threshold as they are", () => {
  const { repo, env } = fixture({ tasks: 40, agents: 3, events: 80 });
  const loose = looseRefs(repo);
  view(repo, env, ["status"]);
  assert.is(packedHandoffRefs(repo), 0);
  assert.ok(looseRefs(repo) >= loose);
});

test.run();
