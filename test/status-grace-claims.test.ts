// `status` settles each task once for its counts, its held list and its matrix (core/overview.ts),
// judging a claim's expiry as a write does: another agent's claim expired by this clock still
// stands for the takeover grace (clock skew) past its expiry, the caller's own does not. Bob claims
// a task for one minute in one clone; alice reads it in the other inside the grace and past it,
// and bob reads his own claim after its expiry.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli } from "./support/repo.ts";
import { at, GRACE_END, INSIDE, PAST, T, twoClones } from "./support/grace-clock.ts";

test.after(cleanupTemp);

test("another agent's claim inside the grace counts as claimed and held; past it, and the caller's own after its expiry, as free", () => {
  const { a, b } = twoClones("status-grace-claims");
  const bob = (args: string[], ms: number) => cli(args, { cwd: b, agent: "bob", env: at(ms) });
  const alice = (args: string[], ms: number) => cli(args, { cwd: a, agent: "alice", env: at(ms) });
  assert.is(bob(["task", "add", "bob's work", "--id", "t", "--push"], T).code, 0);
  assert.is(bob(["claim", "t", "--ttl", "1m", "--push"], T).code, 0);
  assert.is(alice(["sync"], INSIDE).code, 0);

  const inside = alice(["status", "--json", "--no-conflicts"], INSIDE);
  assert.is(inside.code, 0, inside.stderr);
  assert.is(inside.json.counts.claimed, 1, "bob's claim stands for alice through the grace");
  assert.is(inside.json.counts.todo, 0);
  assert.equal(inside.json.holders.map((h: any) => `${h.agent}:${h.tasks.map((t: any) => `${t.task}:${t.grace_until}`)}`), [`bob:t:${GRACE_END}`]);
  assert.equal(inside.json.expired, []);
  assert.equal(inside.json.matrix.rows.map((r: any) => `${r.task}:${r.status}`), ["t:claimed"]);
  assert.equal(inside.json.roster.undeclared_holders, [{ agent: "bob", claimed: ["t"] }], "the roster holds it too");
  const text = alice(["status", "--no-conflicts"], INSIDE).stdout;
  assert.match(text, /todo 0  claimed 1  /);

  const past = alice(["status", "--json", "--no-conflicts"], PAST).json;
  assert.equal([past.counts.todo, past.counts.claimed], [1, 0], "past the grace the claim ran out");
  assert.equal(past.matrix.rows.map((r: any) => `${r.task}:${r.status}`), ["t:todo"]);
  assert.equal(past.roster.undeclared_holders, [], "nor does the roster hold it");
  assert.match(alice(["status", "--no-conflicts"], PAST).stdout, /todo 1  claimed 0  /);

  // The grace is for other agents' clocks: bob's own claim is free once it expires by his.
  const own = bob(["status", "--json", "--no-conflicts"], INSIDE).json;
  assert.equal([own.counts.todo, own.counts.claimed], [1, 0], "the caller's own expired claim is not held");
  assert.match(bob(["status", "--no-conflicts"], INSIDE).stdout, /todo 1  claimed 0  /);
});

test.run();
