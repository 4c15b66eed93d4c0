// `lease --task T` (and MCP's lease_files with `task`) writes a lease only for a task its caller
// holds, the rule doctor judges task leases by (core/lease-for-task.ts): a lease it grants, doctor
// never fails the repository for. Every other state of T is refused with nothing written, in the
// words other verbs use for it; a task not here at all still leases, on the lease's own TTL.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { lease } from "../src/store/lease-actions.ts";
import { openStore } from "../src/store/store.ts";
import { HandoffError } from "../src/core/errors.ts";
import { inProcess, type McpHandle } from "./support/mcp.ts";
import { cleanEnv, cleanupTemp, cli, gitOut, handoffRefs, tempRepo } from "./support/repo.ts";
import { fromTemplate } from "./support/repo-template.ts";

const open: McpHandle[] = [];
test.after(async () => {
  for (const h of open) await h.close();
  cleanupTemp();
});

const T = Date.parse("2026-12-01T09:00:00.000Z");
const at = (ms: number) => ({ HANDOFF_NOW: new Date(ms).toISOString() });
/** Three minutes on: alice's one-minute claim on `lapsed` has run out, her hour on `mine` has not. */
const NOW = T + 3 * 60_000;

/**
 * A repository where, for alice at NOW: `open` is todo, `rev` in review (hers, verified), `fin`
 * done, `theirs` bob's, `lapsed` her claim that ran out (still stored as hers), `taken` reclaimed
 * from her by lead, `mine` hers for an hour. Each task has a scope (src/<id>/**), which claims lease.
 * Written by the real commands once per process; each test gets a copy.
 */
const states = fromTemplate(() => {
  const repo = tempRepo();
  const as = (agent: string, ...args: string[]) => {
    const r = cli(args, { cwd: repo, agent, env: at(T) });
    assert.is(r.code, 0, `${agent} ${args.join(" ")}: ${r.stderr}`);
  };
  for (const id of ["open", "fin", "theirs", "lapsed", "taken", "mine"]) as("lead", "task", "add", `work on ${id}`, "--id", id, "--scope", `src/${id}/**`);
  as("lead", "task", "add", "work on rev", "--id", "rev", "--scope", "src/rev/**", "--verify", "true");
  as("lead", "done", "fin");
  as("bob", "claim", "theirs");
  for (const [id, ttl] of [["rev", "1h"], ["lapsed", "1m"], ["taken", "1h"], ["mine", "1h"]] as const) as("alice", "claim", id, "--ttl", ttl, "--over-capacity");
  as("alice", "done", "rev");
  as("lead", "reclaim", "taken", "--reason", "reassigning");
  return repo;
});

/** Each refused case: the task, the code, and what the one-line message says. */
const REFUSED: [string, string, RegExp][] = [
  ["open", "not_holder", /^cannot lease for task open: alice does not hold it \(status todo\)$/],
  ["rev", "wrong_state", /^task rev is in review \(submitted by alice\)$/],
  ["fin", "final_state", /^task fin is done/],
  ["theirs", "held_by_other", /^task theirs is held by bob /],
  ["lapsed", "not_holder", /^cannot lease for task lapsed: alice does not hold it \(status todo; its claim ran out at 2026-12-01T09:01:00\.000Z\)$/],
  ["taken", "not_holder", /^cannot lease for task taken: lead reclaimed it from alice/],
];

test("CLI: lease --task refuses a todo task, one in review, a finished one, another's, the caller's lapsed or reclaimed claim: exit 3, its code, nothing written", () => {
  const repo = states();
  const refs = handoffRefs(repo);
  const leases = gitOut(repo, "rev-parse", "refs/handoff/leases");
  for (const [id, code, message] of REFUSED) {
    const r = cli(["lease", "src/a.ts", "--task", id, "--json"], { cwd: repo, agent: "alice", env: at(NOW) });
    assert.is(r.code, 3, `${id}: ${r.stdout}${r.stderr}`);
    assert.is(r.json.error.code, code, id);
    assert.match(r.json.error.message, message, id);
    assert.is(gitOut(repo, "rev-parse", "refs/handoff/leases"), leases, `${id}: the lease ref did not move`);
    // Without --json: one line on stderr.
    const text = cli(["lease", "src/a.ts", "--task", id], { cwd: repo, agent: "alice", env: at(NOW) });
    assert.is(text.code, 3, id);
    assert.match(text.stderr.split("\n")[0]!, /^git-handoff: /, id);
  }
  const open = cli(["lease", "src/a.ts", "--task", "open", "--json"], { cwd: repo, agent: "alice", env: at(NOW) }).json.error;
  assert.equal(open.suggestions.map((s: { detail: string }) => s.detail), ["claim it first: git handoff claim open", "or lease the paths without --task (the lease then stands on its own TTL)"]);
  // Paths the policy ignores do not hide the refusal.
  assert.is(cli(["lease", "package-lock.json", "--task", "open"], { cwd: repo, agent: "alice", env: at(NOW) }).code, 3);
  assert.is(handoffRefs(repo), refs, "nothing written anywhere under refs/handoff");
});

test("CLI: lease --task for a held task follows the claim's expiry; a task not here leases on its own TTL with task_not_found; doctor passes", () => {
  const repo = states();
  const mine = cli(["lease", "src/m.ts", "--task", "mine", "--ttl", "5m", "--json"], { cwd: repo, agent: "alice", env: at(NOW) });
  assert.is(mine.code, 0, mine.stderr);
  assert.is(mine.json.leased[0].expires_at, new Date(T + 3_600_000).toISOString(), "the claim's expiry, not the 5m TTL");
  const ghost = cli(["lease", "src/g.ts", "--task", "ghost", "--ttl", "5m", "--json"], { cwd: repo, agent: "alice", env: at(NOW) });
  assert.is(ghost.code, 0, ghost.stderr);
  assert.is(ghost.json.task_not_found, "ghost");
  assert.is(ghost.json.leased[0].expires_at, new Date(NOW + 5 * 60_000).toISOString());
  // What lease --task grants, doctor does not fail the repository for.
  const doctor = cli(["doctor", "--json"], { cwd: repo, agent: "lead", env: at(NOW) });
  const check = (doctor.json.checks as { name: string; status: string; detail: string }[]).find((c) => c.name === "leases")!;
  assert.is(check.status, "ok", check.detail);
});

test("a release landing between lease --task's read of the task and its write: the write does not count, the task is read again, refused", async () => {
  const repo = states();
  const store = await openStore({ cwd: repo, agent: "alice", env: cleanEnv(at(NOW)) });
  try {
    const leases = gitOut(repo, "rev-parse", "refs/handoff/leases");
    const casLoop = store.casLoop.bind(store);
    let released = false;
    store.casLoop = ((attempt, opts) => {
      if (!released) {
        released = true;
        const r = cli(["release", "mine"], { cwd: repo, agent: "alice", env: at(NOW) });
        assert.is(r.code, 0, r.stderr);
      }
      return casLoop(attempt, opts);
    }) as typeof store.casLoop;
    const e = await lease(store, ["src/m.ts"], { task: "mine", cwd: repo }).then(() => null, (x: unknown) => x);
    assert.ok(released, "the release ran inside the lease's write");
    assert.instance(e, HandoffError);
    assert.is((e as HandoffError).code, "not_holder");
    // The release moved the lease ref (it ends mine's leases); the refused lease wrote nothing on top.
    assert.not.match(gitOut(repo, "log", "--format=%s", `${leases}..refs/handoff/leases`), /^leased/m);
    assert.equal(cli(["leases", "--json"], { cwd: repo, agent: "lead", env: at(NOW) }).json.filter((l: { task: string | null }) => l.task === "mine"), []);
  } finally {
    store.close();
  }
});

test("MCP: lease_files with a task refuses the same states with the same codes, suggestions in tool words, nothing written; a held task or one not here leases", async () => {
  const repo = states();
  const alice = await inProcess(repo, { agent: "alice", env: at(NOW) });
  open.push(alice);
  const leases = gitOut(repo, "rev-parse", "refs/handoff/leases");
  for (const [id, code, message] of REFUSED) {
    const r = await alice.refused("lease_files", { paths: ["src/a.ts"], task: id });
    assert.is(r.code, code, id);
    assert.match(r.message, message, id);
    assert.is(gitOut(repo, "rev-parse", "refs/handoff/leases"), leases, `${id}: the lease ref did not move`);
  }
  const openTask = await alice.refused("lease_files", { paths: ["src/a.ts"], task: "open" });
  assert.equal(openTask.suggestions.map((s: { detail: string }) => s.detail), ['claim it first: claim_task {"id": "open"}', "or lease the paths without task (the lease then stands on its own TTL)"]);
  const mine = await alice.ok("lease_files", { paths: ["src/m.ts"], task: "mine", ttl: "5m" });
  assert.is(mine.leased[0].expires_at, new Date(T + 3_600_000).toISOString());
  const ghost = await alice.ok("lease_files", { paths: ["src/g.ts"], task: "ghost" });
  assert.is(ghost.task_not_found, "ghost");
});

test.run();
