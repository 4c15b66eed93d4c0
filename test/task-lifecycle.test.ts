// The whole task lifecycle through the real CLI, as a user or an agent would drive it.
import { hostname } from "node:os";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupFixtures, nonTempDir, repoIn } from "./support/fixtures.ts";
import { cleanupTemp, cli, gitOut, handoffRefs, tempDir, tempRepo, type CliResult } from "./support/repo.ts";
import { storeClaim, storeTasks } from "./support/seed.ts";

test.after(() => {
  cleanupTemp();
  cleanupFixtures();
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;
const T0 = "2026-11-29T10:00:00.000Z";
const plus = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();
const MIN = 60_000;

function ok(r: CliResult): CliResult {
  assert.is(r.code, 0, `exit ${r.code}: ${r.stderr}${r.stdout}`);
  return r;
}

/** Runs as `agent` with the clock fixed at `now`. */
function as(repo: string, agent: string, now: string, args: string[]): CliResult {
  return cli(args, { cwd: repo, agent, env: { HANDOFF_NOW: now } });
}

function assertTaskShape(t: any): void {
  for (const k of ["id", "objective", "status", "priority", "scope", "claim", "attempts", "created_at", "updated_at"]) {
    assert.ok(k in t, `task JSON lacks ${k}: ${JSON.stringify(t)}`);
  }
  assert.ok(["todo", "claimed", "done", "failed", "cancelled"].includes(t.status));
  assert.type(t.priority, "number");
  assert.ok(Array.isArray(t.scope));
  assert.type(t.attempts, "number");
  assert.match(t.created_at, ISO);
  assert.match(t.updated_at, ISO);
  if (t.claim !== null) {
    for (const k of ["agent", "claimed_at", "expires_at", "fence"]) assert.ok(k in t.claim, `claim lacks ${k}`);
    assert.match(t.claim.claimed_at, ISO);
    assert.match(t.claim.expires_at, ISO);
    assert.type(t.claim.fence, "number");
  }
}

test("task add: generated ids are short, unique and valid ref names; --id, --priority and repeated --scope are kept", () => {
  const repo = tempRepo();
  const ids = new Set<string>();
  for (let i = 0; i < 5; i++) {
    const r = ok(cli(["task", "add", "fix", "the", "thing", String(i)], { cwd: repo, agent: "lead" }));
    const id = r.stdout.trim();
    assert.ok(id.length <= 12, `id ${id} is short`);
    assert.match(id, /^[a-z0-9-]+$/);
    gitOut(repo, "check-ref-format", `refs/handoff/tasks/${id}`); // throws if invalid
    ids.add(id);
  }
  assert.is(ids.size, 5);

  const r = ok(cli(["task", "add", "write", "docs", "--id", "docs", "--priority", "7", "--scope", "docs/**", "--scope", "README.md", "--json"], { cwd: repo, agent: "lead" }));
  assertTaskShape(r.json);
  assert.is(r.json.id, "docs");
  assert.is(r.json.objective, "write docs");
  assert.is(r.json.status, "todo");
  assert.is(r.json.priority, 7);
  assert.equal(r.json.scope, ["docs/**", "README.md"]);
  assert.is(r.json.claim, null);
  assert.is(r.json.attempts, 0);
  assert.is(gitOut(repo, "rev-parse", "--verify", "refs/handoff/tasks/docs^{commit}").length, 40);

  const neg = ok(cli(["task", "add", "low", "--id", "low", "--priority", "-3", "--json"], { cwd: repo, agent: "lead" }));
  assert.is(neg.json.priority, -3);

  const dup = cli(["task", "add", "again", "--id", "docs"], { cwd: repo, agent: "lead" });
  assert.is(dup.code, 3, dup.stderr);
  assert.match(dup.stderr, /already exists/);
});

test("task show, task list --status and the tasks alias print the same tasks, as text and --json", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead", now: T0 }, [{ id: "one", objective: "one" }]);
  await storeTasks({ cwd: repo, agent: "lead", now: plus(T0, 1000) }, [{ id: "two", objective: "two" }]);
  await storeTasks({ cwd: repo, agent: "lead", now: plus(T0, 2000) }, [{ id: "three", objective: "three" }]);
  await storeClaim({ cwd: repo, agent: "alice", now: plus(T0, 3000) }, "two");
  ok(as(repo, "alice", plus(T0, 4000), ["done", "three"]));

  const show = ok(as(repo, "bob", plus(T0, 5000), ["task", "show", "two", "--json"]));
  assertTaskShape(show.json);
  assert.is(show.json.claim.agent, "alice");
  assert.is(show.json.created_at, plus(T0, 1000));
  const text = ok(as(repo, "bob", plus(T0, 5000), ["task", "show", "two"])).stdout;
  assert.match(text, /two\s+claimed/);
  assert.match(text, /holder:\s+alice/);

  const all = ok(as(repo, "bob", plus(T0, 5000), ["task", "list", "--json"])).json;
  assert.equal(all.map((t: any) => t.id), ["one", "two", "three"]);
  all.forEach(assertTaskShape);
  const alias = ok(as(repo, "bob", plus(T0, 5000), ["tasks", "--json"])).json;
  assert.equal(alias, all);
  for (const [status, ids] of [["todo", ["one"]], ["claimed", ["two"]], ["done", ["three"]], ["failed", []]] as const) {
    const r = ok(as(repo, "bob", plus(T0, 5000), ["tasks", "--status", status, "--json"]));
    assert.equal(r.json.map((t: any) => t.id), ids, status);
  }
  const lines = ok(as(repo, "bob", plus(T0, 5000), ["task", "list"])).stdout.trim().split("\n");
  assert.is(lines.length, 3);
  assert.match(lines[1]!, /^two\s+claimed .*alice/);
  assert.is(ok(as(repo, "bob", plus(T0, 5000), ["tasks", "--status", "failed"])).stdout.trim(), "no tasks");

  const before = handoffRefs(repo);
  for (const args of [["task", "show", "nope"], ["claim", "nope"], ["renew", "nope"], ["release", "nope"], ["done", "nope"], ["fail", "nope", "--reason", "r"], ["reclaim", "nope", "--reason", "r"], ["cancel", "nope", "--reason", "r"]]) {
    const missing = cli(args, { cwd: repo, agent: "bob" });
    assert.is(missing.code, 4, `${args.join(" ")}: ${missing.stderr}`);
    assert.match(missing.stderr, /^git-handoff: no task nope \[not_found\]\n/);
  }
  assert.is(cli(["task", "show", "nope", "--json"], { cwd: repo, agent: "bob" }).json.error.code, "not_found");
  assert.is(handoffRefs(repo), before);
});

test("claim sets a lease; renew (and claiming what you hold) moves expires_at; release frees; fences only go up", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead", now: T0 }, [{ id: "l", objective: "lease test" }]);
  const c = ok(as(repo, "alice", T0, ["claim", "l", "--ttl", "10m", "--json"])).json;
  assertTaskShape(c);
  assert.is(c.status, "claimed");
  assert.is(c.claim.agent, "alice");
  assert.is(c.claim.claimed_at, T0);
  assert.is(c.claim.expires_at, plus(T0, 10 * MIN));
  assert.is(c.claim.fence, 1);

  const r1 = ok(as(repo, "alice", plus(T0, 5 * MIN), ["renew", "l", "--json"])).json;
  assert.is(r1.claim.expires_at, plus(T0, 15 * MIN), "renew keeps the claim's ttl, from now");
  assert.is(r1.claim.fence, 1);
  const r2 = ok(as(repo, "alice", plus(T0, 6 * MIN), ["renew", "l", "--ttl", "2h", "--json"])).json;
  assert.is(r2.claim.expires_at, plus(T0, 126 * MIN));
  const again = ok(as(repo, "alice", plus(T0, 7 * MIN), ["claim", "l", "--ttl", "90s", "--json"])).json;
  assert.is(again.claim.expires_at, plus(T0, 7 * MIN + 90_000), "claiming what you hold renews it");
  assert.is(again.claim.fence, 1, "a renewal is not a new grant");
  assert.is(again.claim.claimed_at, T0);

  const rel = ok(as(repo, "alice", plus(T0, 8 * MIN), ["release", "l", "--json"])).json;
  assert.is(rel.status, "todo");
  assert.is(rel.claim, null);
  const c2 = ok(as(repo, "bob", plus(T0, 9 * MIN), ["claim", "l", "--json"])).json;
  assert.is(c2.claim.agent, "bob");
  assert.is(c2.claim.fence, 2);
  assert.is(c2.claim.expires_at, plus(T0, 39 * MIN), "default ttl is 30 minutes");

  const types = gitOut(repo, "log", "--format=%s", "refs/handoff/tasks/l").split("\n").map((l) => l.split(" ")[0]);
  assert.equal(types, ["claimed", "released", "renewed", "renewed", "renewed", "claimed", "created"]);
});

test("done --commit --note, fail --reason and cancel --reason finish tasks; finished tasks refuse further changes", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, ["d", "f", "c", "u"].map((id) => ({ id, objective: `task ${id}` })));
  await storeClaim({ cwd: repo, agent: "alice" }, "d");
  const head = gitOut(repo, "rev-parse", "HEAD");
  const d = ok(cli(["done", "d", "--commit", "HEAD", "--note", "merged the parser", "--json"], { cwd: repo, agent: "alice" })).json;
  assertTaskShape(d);
  assert.is(d.status, "done");
  assert.is(d.claim, null);
  assert.equal(d.result, { commit: head, note: "merged the parser" });

  await storeClaim({ cwd: repo, agent: "alice" }, "f");
  const f = ok(cli(["fail", "f", "--reason", "the API does not exist", "--json"], { cwd: repo, agent: "alice" })).json;
  assert.is(f.status, "failed");
  assert.is(f.result.reason, "the API does not exist");
  const noReason = cli(["fail", "u"], { cwd: repo, agent: "alice" });
  assert.is(noReason.code, 2);
  assert.match(noReason.stderr, /--reason/);

  const c = ok(cli(["cancel", "c", "--reason", "not needed", "--json"], { cwd: repo, agent: "lead" })).json;
  assert.is(c.status, "cancelled");
  // an unclaimed task may be closed by anyone
  assert.is(ok(cli(["done", "u", "--json"], { cwd: repo, agent: "lead" })).json.status, "done");

  const before = handoffRefs(repo);
  for (const [args, re] of [
    [["claim", "d"], /task d is done/],
    [["done", "d"], /task d is done/],
    [["release", "f"], /task f is failed/],
    [["renew", "c"], /task c is cancelled/],
    [["reclaim", "d", "--reason", "x"], /task d is done/],
  ] as const) {
    const r = cli([...args], { cwd: repo, agent: "bob" });
    assert.is(r.code, 3, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, re);
    assert.match(r.stderr, /claim --next/);
  }
  assert.is(handoffRefs(repo), before);
});

test("a non-holder cannot release, renew, finish or fail a task: exit 3 naming the holder, with suggestions", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "h", objective: "held" }]);
  await storeClaim({ cwd: repo, agent: "alice" }, "h", { ttl: "1h" });
  const before = handoffRefs(repo);
  for (const args of [["release", "h"], ["renew", "h"], ["done", "h"], ["fail", "h", "--reason", "x"], ["cancel", "h", "--reason", "x"], ["claim", "h"]]) {
    const r = cli(args, { cwd: repo, agent: "bob" });
    assert.is(r.code, 3, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, /^git-handoff: task h is held by alice .*until \d{4}-\d{2}-\d{2}T.*Z \(in \d+m\) \[held_by_other\]\n/);
    assert.match(r.stderr, /\n {2}wait: /);
    assert.match(r.stderr, /\n {2}negotiate: ask alice .*git handoff ask alice --release h/);
    assert.match(r.stderr, /\n {2}work_elsewhere: .*claim --next/);
  }
  const j = cli(["release", "h", "--json"], { cwd: repo, agent: "bob" });
  assert.is(j.code, 3);
  assert.is(j.json.error.code, "held_by_other");
  assert.is(j.json.error.recoverable, true);
  assert.is(j.json.error.data.holder, "alice");
  assert.is(j.json.error.data.task, "h");
  assert.match(j.json.error.data.expires_at, ISO);
  assert.equal(j.json.error.suggestions.map((s: any) => s.action), ["wait", "negotiate", "work_elsewhere"]);

  // nobody holds it: release and renew are refused too, saying so
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "free", objective: "free" }]);
  const rel = cli(["release", "free", "--json"], { cwd: repo, agent: "bob" });
  assert.is(rel.code, 3);
  assert.is(rel.json.error.code, "not_holder");
  assert.match(rel.stderr, /bob does not hold it/);
  assert.is(handoffRefs(repo).split("\n").length, before.split("\n").length + 1);
});

test("an agent whose claim was reclaimed cannot finish the task (done, a review submission, fail) until it claims it again", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "s", objective: "stuck work", verify: "true" }]);
  await storeClaim({ cwd: repo, agent: "alice" }, "s");
  ok(cli(["reclaim", "s", "--reason", "alice stopped answering"], { cwd: repo, agent: "lead" }));
  const before = handoffRefs(repo);
  for (const args of [["done", "s", "--no-verify"], ["done", "s"], ["fail", "s", "--reason", "x"]]) {
    const r = cli([...args, "--json"], { cwd: repo, agent: "alice" });
    assert.is(r.code, 3, `${args.join(" ")}: ${r.stderr}`);
    assert.is(r.json.error.code, "not_holder");
    assert.match(r.json.error.message, /lead reclaimed it from alice \(fence 1\) at .*; claim it again first/);
    assert.equal(r.json.error.suggestions.map((x: any) => x.action), ["retry", "negotiate"]);
  }
  assert.is(handoffRefs(repo), before, "nothing written");
  assert.equal(ok(cli(["task", "show", "s", "--json"], { cwd: repo })).json.reclaimed.agent, "alice");
  // claimed again, alice finishes it (the verify command sends it to review)
  ok(cli(["claim", "s"], { cwd: repo, agent: "alice" }));
  assert.is(ok(cli(["done", "s", "--json"], { cwd: repo, agent: "alice" })).json.status, "review");
});

test("claim --next gives an agent back the task its own claim let expire (a worker killed and started again under its name)", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead", now: T0 }, [{ id: "s", objective: "stranded" }]);
  ok(as(repo, "codex@m2", T0, ["claim", "--next", "--ttl", "1m"]));
  // while its claim lives, a second call of the same agent is not handed the same task
  assert.is(as(repo, "codex@m2", plus(T0, 30_000), ["claim", "--next"]).code, 3);
  const again = ok(as(repo, "codex@m2", plus(T0, 2 * MIN), ["claim", "--next", "--json"])).json;
  assert.equal([again.id, again.claim.agent, again.claim.fence, again.attempts], ["s", "codex@m2", 2, 1]);
});

test("claim --next takes the highest priority, then the oldest; none left -> exit 3", async () => {
  const repo = tempRepo();
  const tasks = [["old-low", "old low", 1], ["zz-new-high", "new high", 5], ["aa-newer-high", "newer high", 5], ["newest-low", "newest low", 1], ["taken", "urgent but taken", 9]] as const;
  for (const [i, [id, objective, priority]] of tasks.entries()) await storeTasks({ cwd: repo, agent: "lead", now: plus(T0, i * 1000) }, [{ id, objective, priority }]);
  await storeClaim({ cwd: repo, agent: "other", now: plus(T0, 5000) }, "taken");
  const order: string[] = [];
  for (let i = 0; i < 4; i++) order.push(ok(as(repo, "alice", plus(T0, 6000 + i), ["claim", "--next", "--over-capacity", "--json"])).json.id);
  assert.equal(order, ["zz-new-high", "aa-newer-high", "old-low", "newest-low"]);
  const none = as(repo, "alice", plus(T0, 7000), ["claim", "--next", "--over-capacity"]);
  assert.is(none.code, 3);
  assert.match(none.stderr, /no task is ready/);
});

test("status shows tasks by state, who holds what and what expires soon, as text and --json", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead", now: T0 }, ["a", "b", "c"].map((id) => ({ id, objective: id })));
  await storeClaim({ cwd: repo, agent: "alice", now: T0 }, "a", { ttl: "2h" });
  await storeClaim({ cwd: repo, agent: "bob", now: T0 }, "b", { ttl: "3m" });
  const s = ok(as(repo, "carol", plus(T0, MIN), ["status", "--json"])).json;
  assert.equal(s.counts, { todo: 1, claimed: 2, done: 0, failed: 0, cancelled: 0, review: 0 });
  assert.equal(s.holders.map((h: any) => [h.agent, h.tasks.map((t: any) => t.task)]), [["alice", ["a"]], ["bob", ["b"]]]);
  assert.equal(s.expiring_soon.map((t: any) => t.task), ["b"]);
  assert.is(s.me.agent, "carol");
  assert.is(s.me.scope, "ephemeral");
  const text = ok(as(repo, "carol", plus(T0, MIN), ["status"])).stdout;
  assert.match(text, /^carol \(ephemeral, main\)/);
  assert.match(text, /todo 1 {2}claimed 2 {2}done 0/);
  assert.match(text, /alice\s+a\s+until in 119m/);
  assert.match(text, /expiring soon\n {2}b\s+bob in 2m/);
});

test("init prepares the repo idempotently and writes no handoff ref", () => {
  const repo = tempRepo();
  const first = ok(cli(["init", "--json"], { cwd: repo, agent: "lead" })).json;
  assert.is(first.changed, true);
  assert.is(gitOut(repo, "config", "--local", "handoff.version"), "1");
  const second = ok(cli(["init"], { cwd: repo, agent: "lead" }));
  assert.match(second.stdout, /already set up/);
  assert.is(ok(cli(["init", "--json"], { cwd: repo, agent: "lead" })).json.changed, false);
  assert.is(handoffRefs(repo), "");
});

test("agent identity: --agent beats HANDOFF_AGENT beats the default user@host[.worktree]", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "x", objective: "x" }]);
  const host = hostname().split(".")[0]!.replace(/[^A-Za-z0-9._+-]+/g, "-");
  const env = { USER: "tester" };
  const dflt = ok(cli(["status", "--json"], { cwd: repo, env })).json.me.agent;
  assert.is(dflt, `tester@${host}`);
  assert.is(ok(cli(["status", "--json"], { cwd: repo, env: { ...env, HANDOFF_AGENT: "from-env" } })).json.me.agent, "from-env");
  assert.is(ok(cli(["status", "--json"], { cwd: repo, env: { ...env, HANDOFF_AGENT: "" } })).json.me.agent, dflt, "empty means unset");
  assert.is(ok(cli(["status", "--json", "--agent", "from-flag"], { cwd: repo, env: { ...env, HANDOFF_AGENT: "from-env" } })).json.me.agent, "from-flag");
  assert.is(ok(cli(["--agent", "before-verb", "status", "--json"], { cwd: repo, env: { ...env, HANDOFF_AGENT: "from-env" } })).json.me.agent, "before-verb");
  const claim = ok(cli(["claim", "x", "--agent", "flagged", "--json"], { cwd: repo, env: { HANDOFF_AGENT: "from-env" } })).json;
  assert.is(claim.claim.agent, "flagged");
  assert.is(gitOut(repo, "log", "-1", "--format=%an", "refs/handoff/tasks/x"), "flagged");

  const wt = join(tempDir(), "feature-wt");
  gitOut(repo, "worktree", "add", "-q", "-b", "feature", wt);
  assert.is(ok(cli(["status", "--json"], { cwd: wt, env })).json.me.agent, `tester@${host}.feature-wt`);
});

test("scope is primary in a main worktree, worktree in a linked one, ephemeral under the temp folder or on a detached HEAD", async () => {
  const base = nonTempDir();
  const main = join(base, "main");
  mkdirSync(main);
  repoIn(main);
  const linked = join(base, "linked");
  gitOut(main, "worktree", "add", "-q", "-b", "side", linked);
  await storeTasks({ cwd: main, agent: "lead" }, ["p", "w", "e"].map((id) => ({ id, objective: id })));

  const p = ok(cli(["claim", "p", "--json"], { cwd: main, agent: "prim" })).json.claim;
  assert.equal([p.scope, p.worktree, p.branch], ["primary", main, "main"]);
  const w = ok(cli(["claim", "w", "--json"], { cwd: linked, agent: "linky" })).json.claim;
  assert.equal([w.scope, w.worktree, w.branch], ["worktree", linked, "side"]);

  const tmpRepo = tempRepo();
  assert.is(ok(cli(["status", "--json"], { cwd: tmpRepo, agent: "t" })).json.me.scope, "ephemeral");
  const tmpLinked = join(tempDir(), "wt");
  gitOut(main, "worktree", "add", "-q", "-b", "tmpside", tmpLinked);
  assert.is(ok(cli(["status", "--json"], { cwd: tmpLinked, agent: "t" })).json.me.scope, "ephemeral");
  const detached = join(base, "detached");
  gitOut(main, "worktree", "add", "-q", "--detach", detached);
  const e = ok(cli(["claim", "e", "--json"], { cwd: detached, agent: "det" })).json.claim;
  assert.equal([e.scope, e.branch], ["ephemeral", null]);

  const events = ok(cli(["events", "--type", "claimed", "--json"], { cwd: main, agent: "lead" })).json;
  const seen = events.map((ev: any) => [ev.task, ev.agent, ev.scope]).sort();
  assert.equal(seen, [["e", "det", "ephemeral"], ["p", "prim", "primary"], ["w", "linky", "worktree"]]);
  assert.ok(events.every((ev: any) => ev.scope && "worktree" in ev && "branch" in ev));
  const status = ok(cli(["status", "--json"], { cwd: linked, agent: "linky" })).json;
  assert.equal([status.me.scope, status.me.branch, status.me.worktree], ["worktree", "side", linked]);
  const held = status.holders.flatMap((h: any) => h.tasks.map((t: any) => [t.task, t.scope]));
  assert.equal(held.sort(), [["e", "ephemeral"], ["p", "primary"], ["w", "worktree"]]);
  const text = ok(cli(["status"], { cwd: main, agent: "prim" })).stdout;
  assert.match(text, /^prim \(primary, main\)/);
  assert.match(text, /linky\s+w\s+until in \d+m\s+worktree side /);
});

test("-C DIR works from outside; a subfolder and a linked worktree see the same state", () => {
  const repo = tempRepo();
  const outside = tempDir();
  ok(cli(["-C", repo, "task", "add", "from", "outside", "--id", "o"], { cwd: outside, agent: "lead" }));
  const sub = join(repo, "src", "deep");
  mkdirSync(sub, { recursive: true });
  ok(cli(["claim", "o"], { cwd: sub, agent: "alice" }));
  const wt = join(tempDir(), "wt2");
  gitOut(repo, "worktree", "add", "-q", "-b", "wt2", wt);
  const fromWt = ok(cli(["task", "show", "o", "--json"], { cwd: wt, agent: "bob" })).json;
  assert.is(fromWt.claim.agent, "alice");
  const wtSub = join(wt, "sub");
  mkdirSync(wtSub);
  ok(cli(["task", "add", "from", "linked", "--id", "lnk"], { cwd: wtSub, agent: "bob" }));
  const fromOutside = ok(cli(["tasks", "--json", "-C", repo], { cwd: outside, agent: "x" })).json;
  assert.equal(fromOutside.map((t: any) => t.id).sort(), ["lnk", "o"]);
  // the ref lives in the shared repository, not in the linked worktree's private dir
  assert.is(gitOut(repo, "rev-parse", "refs/handoff/tasks/lnk"), gitOut(wt, "rev-parse", "refs/handoff/tasks/lnk"));
  const r = cli(["release", "o", "-C", wt], { cwd: outside, agent: "alice" });
  assert.is(r.code, 0, r.stderr);
});

test("everything still works once git gc has packed the objects", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "pk", objective: "packed" }]);
  await storeClaim({ cwd: repo, agent: "alice" }, "pk");
  gitOut(repo, "gc", "-q", "--prune=now");
  const show = ok(cli(["task", "show", "pk", "--json"], { cwd: repo, agent: "alice" }));
  assert.is(show.json.claim.agent, "alice");
  const done = ok(cli(["done", "pk", "--json"], { cwd: repo, agent: "alice" }));
  assert.is(done.json.status, "done");
  assert.is(ok(cli(["events", "--task", "pk", "--json"], { cwd: repo })).json.length, 3);
});

test.run();
