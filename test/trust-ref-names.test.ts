// A ref planted on the remote under a name no git-handoff writes, where a ref clones need must go
// (`refs/handoff/leases/x` before the lease set exists, `refs/handoff/agents/<name>/x`,
// `refs/handoff/loop/x`, `refs/handoff/docs`), is refused on receive; and since git cannot create
// a ref beside a folder of refs of the same name, every push of the ref it shadows fails. That
// was retried and reported as a lost race ("run it again") forever, and only `sync --repair
// --force` cleared it. Now a write that needs the shadowed ref is refused at once, naming the ref
// in the way and the command that removes it, sync holds back only that ref and pushes the rest
// (test/sync-planted-partial.test.ts), and `sync --repair` deletes it.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { commit, tree } from "./support/forge.ts";
import { cleanupTemp, cli, gitOut, succeeded } from "./support/repo.ts";
import { cloneOf, emptyRemote } from "./support/servers.ts";

test.after(cleanupTemp);

const ok = succeeded;
const PLANTED = ["refs/handoff/agents/lead/x", "refs/handoff/docs", "refs/handoff/leases/x", "refs/handoff/loop/x"];
const remoteRefs = (bare: string) => gitOut(bare, "for-each-ref", "--format=%(refname)", "refs/handoff/").split("\n").filter(Boolean);

function planted() {
  const bare = emptyRemote();
  const attacker = cloneOf(bare);
  const victim = cloneOf(bare);
  const c = commit(attacker, { tree: tree(attacker, { x: "x" }), message: "x" });
  gitOut(attacker, "push", "-q", bare, ...PLANTED.map((r) => `${c}:${r}`));
  ok(cli(["task", "add", "a task with a scope", "--id", "q", "--scope", "src/**"], { cwd: victim, agent: "lead" }));
  return { bare, victim };
}

test("a planted ref in the way of the lease set is refused on receive, and a claim's push names it and the command that removes it, at once", () => {
  const { victim } = planted();
  const s = cli(["sync", "--json"], { cwd: victim, agent: "lead" });
  assert.is(s.code, 3, s.stderr);
  const refused = new Map<string, { reason: string }>(s.json.quarantined.map((q: { ref: string; reason: string }) => [q.ref, q]));
  for (const ref of ["refs/handoff/docs", "refs/handoff/leases/x", "refs/handoff/loop/x"]) assert.match(refused.get(ref)?.reason ?? "", /^unknown layout: /, ref);
  assert.is(gitOut(victim, "for-each-ref", "refs/handoff/leases/", "refs/handoff/loop/", "refs/handoff/docs"), "", "none of them is taken in");
  const text = cli(["sync"], { cwd: victim, agent: "lead" });
  assert.match(text.stdout, /^refused on receive: refs\/handoff\/leases\/x: unknown layout: refs\/handoff\/leases has no sub-refs \(kept under refs\/handoff-remotes\/origin\/; git handoff sync --repair deletes it\)$/m);

  const started = Date.now();
  const c = cli(["claim", "q", "--json"], { cwd: victim, agent: "lead" });
  assert.ok(Date.now() - started < 15_000, `the claim took ${Date.now() - started} ms`);
  assert.is(c.code, 3, c.stdout + c.stderr);
  assert.is(c.json.error.code, "quarantined");
  assert.is(c.json.error.message, "the sync remote origin holds refs/handoff/leases/x, a name no git-handoff writes (refused on receive), and git cannot create refs/handoff/leases beside it; remove it with: git handoff sync --repair");
  assert.equal(c.json.error.data.blocks, ["refs/handoff/leases"]);
});

test("sync holds back only the ref a planted one stands in the way of, names both, and pushes the rest instead of 'losing races'; sync --repair without --force deletes the planted refs, and claims and syncs work again", () => {
  const { bare, victim } = planted();
  ok(cli(["session", "start", "--objective", "work"], { cwd: victim, agent: "lead" }));
  const s = cli(["sync"], { cwd: victim, agent: "lead" });
  assert.is(s.code, 3, s.stderr);
  assert.match(s.stdout, /^not pushed: refs\/handoff\/agents\/lead \(origin holds refs\/handoff\/agents\/lead\/x, a name no git-handoff writes, and git cannot create refs\/handoff\/agents\/lead beside it; git handoff sync --repair deletes it, then sync again\)$/m);
  assert.not.match(s.stdout + s.stderr, /losing races/);
  assert.ok(remoteRefs(bare).includes("refs/handoff/tasks/q"), "the rest went out");
  assert.not.ok(remoteRefs(bare).includes("refs/handoff/agents/lead"));

  const r = cli(["sync", "--repair", "--json"], { cwd: victim, agent: "lead" });
  assert.is(r.code, 0, r.stdout + r.stderr);
  const repaired = new Map<string, { ok: boolean; now: string | null }>(r.json.repaired.map((p: { ref: string; ok: boolean; now: string | null }) => [p.ref, p]));
  for (const ref of PLANTED) assert.equal(repaired.get(ref), { ...repaired.get(ref)!, ok: true, now: null }, ref);
  for (const ref of PLANTED) assert.not.ok(remoteRefs(bare).includes(ref), `${ref} is deleted on the remote`);
  ok(cli(["claim", "q"], { cwd: victim, agent: "lead" }));
  ok(cli(["sync"], { cwd: victim, agent: "lead" }));
  assert.ok(remoteRefs(bare).includes("refs/handoff/leases"));
  assert.ok(remoteRefs(bare).includes("refs/handoff/agents/lead"));
});

test.run();
