// Clock skew cannot steal a file lease either: through a remote, an exclusive lease over another
// agent's expired lease waits max_clock_skew past the expiry (a path remote, scripted clocks), no
// write of the lease set sweeps it sooner, no finish of another agent's task comes sooner, and
// a clone 12 minutes ahead of the remote's HTTP Date is refused with clock_skew. What the reads
// answer agrees: `check`, MCP's check_files, the pre-edit hook (edits and shell commands), its sh
// fast path and the pre-commit hook call a file held inside the grace held, as the write would.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { FAST_HOOK } from "./support/hook-runner.ts";
import { overStdio } from "./support/mcp.ts";
import { cleanEnv, cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { storeLease, storeSync, storeTasks, storeClaim, type Actor } from "./support/seed.ts";
import { cloneOf, serveRoot, twoClonesOverHttp, type GitServer } from "./support/servers.ts";
import { MIN } from "./support/team.ts";

const servers: GitServer[] = [];
test.after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  cleanupTemp();
});

const at = (ms: number) => ({ HANDOFF_NOW: new Date(ms).toISOString() });
/** `agent` in `cwd` at `ms`: the setup's writes and syncs, in-process (support/seed.ts). */
const by = (cwd: string, agent: string, ms: number, push = false): Actor => ({ cwd, agent, now: new Date(ms).toISOString(), ...(push ? { push } : {}) });
/** bob's exclusive one-minute lease of src/a.ts in b at `ms`, and alice's sync in a `after` ms later. */
async function bobLeasesAliceSyncs(a: string, b: string, ms: number, after: number): Promise<void> {
  await storeLease(by(b, "bob", ms), ["src/a.ts"], { exclusive: true, ttl: "1m" });
  await storeSync(by(a, "alice", ms + after));
}
/** The time every test's clocks start from. */
const T = Date.parse("2026-11-30T09:00:00.000Z");

/** A bare remote served as a path, its main pushed (with `.handoff.yaml` when given), and two clones of it. */
function twoClones(name: string, policy?: string): { bare: string; a: string; b: string } {
  const bare = serveRoot().bare(name);
  const first = tempRepo();
  if (policy !== undefined) {
    writeFileSync(`${first}/.handoff.yaml`, policy);
    gitOut(first, "add", ".handoff.yaml");
    gitOut(first, "commit", "-q", "-m", "policy");
  }
  gitOut(first, "push", "-q", bare, "main");
  return { bare, a: cloneOf(bare), b: cloneOf(bare) };
}
const remoteLeases = (bare: string) => gitOut(bare, "for-each-ref", "--format=%(objectname)", "refs/handoff/leases");
const holders = (repo: string, env: NodeJS.ProcessEnv) => (cli(["leases", "--json"], { cwd: repo, agent: "x", env }).json as any[]).map((l) => `${l.agent}:${l.pattern}`);
/** Claude's PreToolUse payload for an edit of `file` in `repo`. */
const editPayload = (repo: string, file: string) =>
  JSON.stringify({ session_id: "s-alice", cwd: repo, hook_event_name: "PreToolUse", tool_name: "Edit", tool_input: { file_path: `${repo}/${file}`, old_string: "x", new_string: "y" } });

test("an exclusive lease over another agent's expired one waits max_clock_skew past the expiry, then goes through", async () => {
  const { bare, a, b } = twoClones("lease-grace");
  await bobLeasesAliceSyncs(a, b, T, 90_000);
  const before = remoteLeases(bare);
  // expired 30 s ago by bob's clock: inside the 60 s grace, for an exclusive and a shared request alike
  for (const extra of [["--exclusive"], []]) {
    const early = cli(["lease", "src/a.ts", ...extra, "--json"], { cwd: a, agent: "alice", env: at(T + 90_000) });
    assert.is(early.code, 3, early.stderr);
    assert.is(early.json.error.code, "held_by_other");
    assert.match(early.json.error.message, /held by bob: it expired at .*30s ago, but a takeover waits 60s past the expiry for clock skew/);
    assert.is(early.json.error.data.takeover_grace_ms, 60_000);
  }
  assert.is(remoteLeases(bare), before, "nothing reached the remote");
  // 70 s past the expiry: taken, bob's lease swept in the same push
  const late = cli(["lease", "src/a.ts", "--exclusive", "--json"], { cwd: a, agent: "alice", env: at(T + 130_000) });
  assert.is(late.code, 0, late.stderr);
  assert.equal(holders(a, at(T + 130_000)), ["alice:src/a.ts"]);
  assert.match(gitOut(bare, "log", "--format=%s", "refs/handoff/leases"), /lease_expired|expired/);
  // without a remote nothing waits: the holder's own clock is this one
  const solo = tempRepo();
  await storeLease(by(solo, "bob", T), ["src/a.ts"], { exclusive: true, ttl: "1m" });
  assert.is(cli(["lease", "src/a.ts", "--exclusive"], { cwd: solo, agent: "alice", env: at(T + 61_000) }).code, 0);
});

test("the pre-edit hook's own lease write keeps another agent's lease inside the grace: not swept by a clock ahead", async () => {
  // Declare by doing: an agent's first edit of a file leases it (shared), a write of the whole set.
  const { a, b } = twoClones("hook-grace", "auto_lease: true\n");
  await bobLeasesAliceSyncs(a, b, T, 90_000);
  const leased = () => gitOut(a, "show", "refs/handoff/leases:leases.json");
  const payload = (file: string) => editPayload(a, file);
  // bob's lease expired 30 s ago by alice's clock, inside the 60 s grace: alice's first edit of
  // another file leases it (a write of the whole set), and bob's lease stays in the set.
  const edit = cli(["hook", "claude-pre-tool-use"], { cwd: a, agent: "alice", input: payload("src/b.ts"), env: at(T + 90_000) });
  assert.is(edit.code, 0, edit.stderr);
  const inside = leased();
  assert.match(inside, /alice/, `alice's first edit leased src/b.ts:\n${inside}`);
  assert.match(inside, /bob/, `bob's lease is kept inside the grace:\n${inside}`);
  // A task transaction that is no exclusive write (alice finishing her own task) settles the set
  // with the same grace: bob's lease stays.
  await storeTasks(by(a, "alice", T + 90_000), [{ id: "mine", objective: "mine", scope: ["src/mine/**"] }]);
  assert.is(cli(["claim", "mine"], { cwd: a, agent: "alice", env: at(T + 90_000) }).code, 0);
  assert.is(cli(["done", "mine", "--no-verify"], { cwd: a, agent: "alice", env: at(T + 95_000) }).code, 0);
  assert.match(leased(), /bob/, `bob's lease is kept by alice's done inside the grace:\n${leased()}`);
  // Past the grace the next write sweeps it, as any write does.
  assert.is(cli(["hook", "claude-pre-tool-use"], { cwd: a, agent: "alice", input: payload("src/c.ts"), env: at(T + 130_000) }).code, 0);
  assert.not.match(leased(), /bob/, "swept past the grace");
});

test("another agent's task is not finished (done, fail) nor leased for by a clock ahead inside the grace: no exclusive write, the estimate on file", async () => {
  const { a, b } = twoClones("finish-grace");
  await storeTasks(by(b, "bob", T, true), [{ id: "t", objective: "x" }]);
  await storeClaim(by(b, "bob", T, true), "t", { ttl: "1m" });
  await storeSync(by(a, "alice", T + 90_000));
  const before = gitOut(a, "rev-parse", "refs/handoff/tasks/t");
  // 30 s past bob's expiry by alice's clock, inside the 60 s grace
  // (done with a verification is refused before the command runs: it could only be refused after)
  for (const args of [["done", "t", "--no-verify"], ["done", "t", "--verify", "touch verification-ran"], ["fail", "t", "--reason", "stuck"], ["lease", "src/t.ts", "--task", "t"]]) {
    const early = cli([...args, "--json"], { cwd: a, agent: "alice", env: at(T + 90_000) });
    assert.is(early.code, 3, `${args[0]}: ${early.stdout}${early.stderr}`);
    assert.is(early.json.error.code, "held_by_other");
    assert.match(early.json.error.message, /a takeover waits 60s past the expiry for clock skew/);
  }
  assert.is(gitOut(a, "rev-parse", "refs/handoff/tasks/t"), before, "the task ref did not move");
  assert.not.ok(existsSync(`${a}/verification-ran`), "the verification was not run");
  // past the grace it is anyone's to close, as without a remote
  assert.is(cli(["done", "t", "--no-verify"], { cwd: a, agent: "alice", env: at(T + 130_000) }).code, 0);
});

test("check calls a file another agent's lease stands on through the grace held, as the write would: deny and warn inside it, ok past it", async () => {
  const { a, b } = twoClones("check-grace");
  await storeLease(by(b, "bob", T), ["src/a.ts"], { exclusive: true, ttl: "1m", reason: "refactor" });
  await storeLease(by(b, "bob", T), ["docs/guide.md"], { ttl: "1m" });
  await storeSync(by(b, "bob", T));
  await storeSync(by(a, "alice", T + 90_000));
  // Both expired 30 s ago by alice's clock, inside the 60 s grace: a lease over either is refused, so check says held.
  const inside = cli(["check", "src/a.ts", "docs/guide.md", "--json"], { cwd: a, agent: "alice", env: at(T + 90_000) });
  assert.is(inside.code, 3, inside.stderr);
  assert.equal(inside.json.paths.map((p: any) => p.verdict), ["deny", "warn"]);
  const [denied] = inside.json.paths;
  assert.is(denied.holders[0].grace_until, new Date(T + 120_000).toISOString());
  assert.match(denied.message, /^deny: src\/a\.ts is inside an exclusive lease on src\/a\.ts held by bob until 2026-11-30T09:02:00\.000Z \(in 30s\): it expired 30s ago by this clock, and stands for the takeover grace \(clock skew\); reason: refactor$/);
  assert.match(denied.suggestions[0].detail, /takeover grace past its expiry ends at 2026-11-30T09:02:00\.000Z \(in 30s\)/);
  assert.is(cli(["lease", "src/a.ts", "--exclusive"], { cwd: a, agent: "alice", env: at(T + 90_000) }).code, 3, "the write agrees");
  // MCP's check_files answers the same (a refusal for the denied path).
  const mcp = await overStdio(a, { agent: "alice", env: at(T + 90_000) });
  try {
    const r = await mcp.call("check_files", { paths: ["src/a.ts"] });
    assert.ok(r.isError, JSON.stringify(r.structuredContent ?? r.content));
    assert.match((r.content[0] as { text: string }).text, /held_by_other[^]*stands for the takeover grace/);
  } finally {
    await mcp.close();
  }
  // Past the grace nothing stands: free, as without a remote.
  const past = cli(["check", "src/a.ts", "docs/guide.md"], { cwd: a, agent: "alice", env: at(T + 130_000) });
  assert.is(past.code, 0, past.stderr);
  assert.match(past.stdout, /^ok\b/m);
  assert.not.match(past.stdout, /bob/);
});

test("the pre-edit hook denies an edit inside the grace (not 'ok', then a refused auto-lease), and pre-commit refuses it; past the grace both let it through", async () => {
  const { a, b } = twoClones("hook-check-grace", "auto_lease: true\n");
  await bobLeasesAliceSyncs(a, b, T, 90_000);
  const edit = (ms: number) => cli(["hook", "claude-pre-tool-use"], { cwd: a, agent: "alice", input: editPayload(a, "src/a.ts"), env: at(ms) });
  const inside = edit(T + 90_000);
  assert.is(inside.code, 0, inside.stderr);
  const answer = JSON.parse(inside.stdout).hookSpecificOutput;
  assert.is(answer.permissionDecision, "deny", inside.stdout);
  assert.match(answer.permissionDecisionReason, /held by bob until 2026-11-30T09:02:00\.000Z \(in 30s\): it expired 30s ago by this clock, and stands for the takeover grace/);
  assert.equal(holders(a, at(T + 90_000)), ["bob:src/a.ts"], "nothing leased for alice; bob's lease listed, as it stands through the grace (grace-views.test.ts)");
  assert.match(gitOut(a, "show", "refs/handoff/leases:leases.json"), /bob/, "bob's lease kept");
  // A shell command naming the file is warned about it, until the grace ends.
  const shell = JSON.stringify({ session_id: "s-alice", cwd: a, hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "sed -i s/a/b/ src/a.ts" } });
  const named = cli(["hook", "claude-pre-tool-use"], { cwd: a, agent: "alice", input: shell, env: at(T + 90_000) });
  assert.match(JSON.parse(named.stdout).hookSpecificOutput.additionalContext, /names src\/a\.ts, inside an exclusive lease on src\/a\.ts held by bob until 2026-11-30T09:02:00\.000Z \(expired at 2026-11-30T09:01:00\.000Z by this clock, it stands for the takeover grace\): do not change it/);
  // The git pre-commit hook judges a staged file the same way.
  mkdirSync(`${a}/src`, { recursive: true });
  writeFileSync(`${a}/src/a.ts`, "a\n");
  gitOut(a, "add", "src/a.ts");
  const commit = (ms: number) => cli(["hook", "pre-commit"], { cwd: a, agent: "alice", env: at(ms) });
  const refused = commit(T + 90_000);
  assert.is(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /deny: src\/a\.ts is inside an exclusive lease on src\/a\.ts held by bob until .*stands for the takeover grace[^]*commit refused/);
  assert.is(commit(T + 130_000).code, 0, "past the grace the commit goes on");
  const past = edit(T + 130_000);
  assert.is(past.code, 0, past.stderr);
  assert.not.match(past.stdout, /deny|bob/);
  assert.equal(holders(a, at(T + 130_000)), ["alice:src/a.ts"], "the first edit past the grace leases the file");
});

test("the sh fast path hands an edit inside the grace to the full hook, and answers past it itself", async () => {
  // On the 31st: the awk once took a scripted clock only up to the 28th of a month (fast-hook.sh
  // isoMs), and handed every edit of the last days of a month to the full hook.
  const T2 = Date.parse("2026-10-31T09:00:00.000Z");
  const { a, b } = twoClones("fast-grace");
  await bobLeasesAliceSyncs(a, b, T2, 80_000);
  const fast = (file: string, ms: number) =>
    spawnSync(FAST_HOOK, ["claude-pre-tool-use"], {
      cwd: a,
      input: editPayload(a, file),
      encoding: "utf8",
      env: cleanEnv({ HANDOFF_AGENT: "alice", HANDOFF_NOW: new Date(ms).toISOString(), HANDOFF_FAST_HOOK_CLOCK: "1", HANDOFF_FAST_HOOK_WHY: "1", HANDOFF_HOOK_CATCH_WAIT: "1" }),
    });
  // The first edit has no cache: the full hook answers and compiles one, 20 s into bob's grace.
  const first = fast("free.ts", T2 + 80_000);
  assert.is(first.status, 0, first.stderr + first.stdout);
  const inside = fast("src/a.ts", T2 + 90_000);
  assert.is(inside.status, 0, inside.stderr);
  assert.match(inside.stdout, /"permissionDecision":"deny".*stands for the takeover grace/, `not answered "ok": ${inside.stderr}`);
  assert.match(inside.stderr, /full hook: a lease inside the takeover grace covers a path/);
  // A cache compiled past the grace lists bob's lease no more: the fast path says nothing itself.
  assert.is(fast("free.ts", T2 + 125_000).status, 0);
  const past = fast("src/a.ts", T2 + 130_000);
  assert.is(past.stderr, "", "answered by the fast path");
  assert.is(past.stdout, "");
});

test("a clock a little behind the task's last write (another machine's): its commit is taken by the other clones", async () => {
  const { a, b } = twoClones("behind");
  await storeTasks(by(a, "lead", T, true), [{ id: "near", objective: "near", scope: ["src/near/**"] }]);
  await storeSync(by(b, "bob", T));
  // two minutes behind the task's last write (another machine's clock): the claim goes through...
  const near = cli(["claim", "near", "--json"], { cwd: b, agent: "bob", env: at(T - 2 * MIN) });
  assert.is(near.code, 0, near.stderr);
  // ...and the other clone takes the history it pushed (an event two minutes before its parent's)
  const sa = cli(["sync", "--json"], { cwd: a, agent: "alice", env: at(T) });
  assert.is(sa.code, 0, sa.stderr);
  assert.equal(sa.json.quarantined, [], JSON.stringify(sa.json.quarantined));
  assert.is(cli(["task", "show", "near", "--json"], { cwd: a, agent: "alice", env: at(T) }).json.claim.agent, "bob");
});

test("12 minutes ahead of the remote: an exclusive lease over a live 10-minute one is refused with clock_skew", async () => {
  const { bare, a, b } = await twoClonesOverHttp("lease-ahead", servers);
  const now = Date.now();
  await storeLease(by(b, "bob", now), ["src/a.ts"], { exclusive: true, ttl: "10m" });
  await storeSync(by(a, "alice", now + 12 * MIN));
  const before = remoteLeases(bare);
  const stolen = cli(["lease", "src/a.ts", "--exclusive", "--json"], { cwd: a, agent: "alice", env: at(now + 12 * MIN) });
  assert.is(stolen.code, 3, stolen.stderr);
  assert.is(stolen.json.error.code, "clock_skew");
  assert.match(stolen.json.error.message, /12m ahead of the sync remote origin/);
  assert.is(remoteLeases(bare), before);
  assert.equal(holders(b, at(now)), ["bob:src/a.ts"]);
});

test.run();
