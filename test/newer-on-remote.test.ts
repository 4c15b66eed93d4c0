// Refs the sync remote holds in a newer record format (a future git-handoff, simulated by commits
// with a higher format marker pushed with plain git) are kept back unread. This clone's copy may
// then be stale: check, the edit hooks (deny when strict) and the shell-command hook warn instead
// of calling a file free, `leases` says so, task views mark such a task, claim --next and ready pass
// over what they cannot claim here, and every write to such a ref is refused before anything is
// written. A record from a newer git-handoff read in this very clone has its own code,
// newer_format, and doctor reports it as one check.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { FAST_HOOK } from "./support/hook-runner.ts";
import { commit, setRef, tree } from "./support/forge.ts";
import { futureLeaseSet, futureTask, NEWER_LEASES as NEWER, newerProjectSeeded as project } from "./support/newer-remote.ts";
import { storeLease, storeSync, storeTasks } from "./support/seed.ts";
import { cleanEnv, cleanupTemp, cli, gitOut, handoffRefs, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

type Result = ReturnType<typeof cli>;
const ok = (r: Result) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r;
};
/** A sync that keeps refs back (from a newer git-handoff) says so by its status, 3. */
const heldBack = (r: Result) => {
  assert.is(r.code, 3, `${r.stdout}\n${r.stderr}`);
  return r;
};
const edit = (repo: string, file: string) => JSON.stringify({ tool_name: "Edit", tool_input: { file_path: `${repo}/${file}` }, hook_event_name: "PreToolUse", cwd: repo });
const shell = (repo: string, command: string) => JSON.stringify({ tool_name: "Bash", tool_input: { command }, hook_event_name: "PreToolUse", cwd: repo });
/** The shell hook's line for words the stale lease set calls free. */
const SHELL_NEWER = /git-handoff (warn|deny): this command names src\/b\.ts, which may be leased by another agent: the lease set on origin is from a newer git-handoff/;

test("a lease set held back as newer: check, the edit hook and leases warn instead of calling a file free; strict denies edits, a shell command is only warned", async () => {
  const { bare, b } = await project();
  futureLeaseSet(bare);
  const s = heldBack(cli(["sync"], { cwd: b, agent: "bob" }));
  assert.match(s.stdout, /from a newer git-handoff: refs\/handoff\/leases/);

  // src/b.ts is free in b's stale copy, held exclusively by alice in the newer set.
  const c = ok(cli(["check", "src/b.ts"], { cwd: b, agent: "bob" }));
  assert.match(c.stdout, /^warn +src\/b\.ts may be leased by another agent: the lease set on origin is from a newer git-handoff .*upgrade git-handoff/);
  assert.is(c.stdout.trim().split("\n").length, 1, "one line");
  const j = ok(cli(["check", "src/b.ts", "--json"], { cwd: b, agent: "bob" })).json;
  assert.is(j.verdict, "warn");
  assert.is(j.newer_on_remote, true);
  // What the local copy does say still stands.
  assert.is(cli(["check", "src/a.ts"], { cwd: b, agent: "bob" }).code, 3);

  const before = handoffRefs(b);
  const h = ok(cli(["hook", "claude-pre-tool-use"], { cwd: b, agent: "bob", input: edit(b, "src/b.ts") }));
  assert.match(h.json.hookSpecificOutput.additionalContext, NEWER);
  assert.is(handoffRefs(b), before, "the hook leased nothing into the stale set");
  // A shell command naming it is warned the same way (it used to pass unremarked); one naming a
  // file the local copy knows is leased keeps its own line.
  const sh = ok(cli(["hook", "claude-pre-tool-use"], { cwd: b, agent: "bob", input: shell(b, "rm src/b.ts src/a.ts") }));
  const context = sh.json.hookSpecificOutput.additionalContext as string;
  assert.match(context, SHELL_NEWER);
  assert.match(context, /^git-handoff warn: this command names src\/a\.ts, inside an exclusive lease on src\/a\.ts held by alice/m);
  assert.is(sh.json.hookSpecificOutput.permissionDecision, undefined);
  assert.is(handoffRefs(b), before, "the shell hook wrote nothing either");

  const l = ok(cli(["leases"], { cwd: b, agent: "bob" }));
  assert.match(l.stderr, NEWER);
  const lj = ok(cli(["leases", "--json"], { cwd: b, agent: "bob" }));
  assert.ok(Array.isArray(lj.json), "the --json array keeps its shape");
  assert.match(lj.stderr, NEWER);
  // Each lease of the stale copy says so.
  assert.equal(lj.json.map((l: { pattern: string; newer_on_remote?: true }) => [l.pattern, l.newer_on_remote]), [["src/a.ts", true]]);

  // Strict: the hooks fail closed.
  writeFileSync(`${b}/.handoff.yaml`, "mode: strict\n");
  assert.is(cli(["check", "src/b.ts"], { cwd: b, agent: "bob" }).code, 3);
  const d = ok(cli(["hook", "claude-pre-tool-use"], { cwd: b, agent: "bob", input: edit(b, "src/b.ts") }));
  assert.is(d.json.hookSpecificOutput.permissionDecision, "deny");
  assert.match(d.json.hookSpecificOutput.permissionDecisionReason, NEWER);
  // A shell command's words only ever warn, in strict mode too (a word scan cannot tell a read from a change).
  const ds = ok(cli(["hook", "claude-pre-tool-use"], { cwd: b, agent: "bob", input: shell(b, "rm src/b.ts") }));
  assert.is(ds.json.hookSpecificOutput.permissionDecision, undefined);
  assert.match(ds.json.hookSpecificOutput.additionalContext, /^git-handoff warn: this command names src\/b\.ts, which may be leased/m);
});

test("the sh fast path hands over to the full hook once the lease set is held back as newer, for edits and shell commands", async () => {
  const { bare, b } = await project();
  const run = (payload = edit(b, "src/b.ts")) => spawnSync(FAST_HOOK, ["claude-pre-tool-use"], { cwd: b, input: payload, encoding: "utf8", env: cleanEnv({ HANDOFF_AGENT: "bob", HANDOFF_HOOK_CATCH_WAIT: "1" }) }).stdout;
  // Compiled by the full hook (bob leases src/b.ts on his first edit), then answered by the cache.
  run();
  run();
  assert.is(run(), "", "free: no objection");
  assert.is(run(shell(b, "rm src/c.ts")), "", "a shell command naming a free file: no objection");
  futureLeaseSet(bare);
  heldBack(cli(["sync"], { cwd: b, agent: "bob" }));
  assert.match(run(shell(b, "rm src/c.ts")), /this command names src\/c\.ts, which may be leased by another agent: the lease set on origin is from a newer git-handoff/);
  assert.match(run(), NEWER);
});

test("writes to refs held back as newer are refused before anything is written; claim --next and ready pass over the tasks whose claim would write one", async () => {
  const { bare, a, b } = await project();
  // s is the best task, and its claim would lease its scope in the lease set held back below.
  await storeTasks({ cwd: a, agent: "alice", push: true }, [
    { id: "s", objective: "s", priority: 9, scope: ["docs/**"] },
    { id: "z", objective: "z", priority: 5 },
    { id: "y", objective: "y" },
  ]);
  await storeSync({ cwd: b, agent: "bob" });
  futureTask(bare, "z");
  futureLeaseSet(bare);
  heldBack(cli(["sync"], { cwd: b, agent: "bob" }));

  // Views mark z.
  const show = ok(cli(["task", "show", "z"], { cwd: b, agent: "bob" }));
  assert.match(show.stdout, /on origin from a newer git-handoff: this copy may be stale/);
  assert.is(ok(cli(["task", "show", "z", "--json"], { cwd: b, agent: "bob" })).json.newer_on_remote, true);
  assert.is(ok(cli(["task", "show", "y", "--json"], { cwd: b, agent: "bob" })).json.newer_on_remote, undefined);
  const list = ok(cli(["task", "list", "--json"], { cwd: b, agent: "bob" })).json as { id: string; newer_on_remote?: true }[];
  assert.equal(list.map((t) => [t.id, !!t.newer_on_remote]).sort(), [["s", false], ["y", false], ["z", true]]);
  const ready = ok(cli(["ready", "--json"], { cwd: b, agent: "bob" }));
  assert.equal(ready.json.map((t: { id: string }) => t.id), ["y"]);
  assert.match(ready.stderr, /2 ready task\(s\) not listed \(s, z\): the remote holds them, or the lease set their scope needs, from a newer git-handoff; upgrade to take them/);

  // Every write to z or to the lease set is refused, exclusive or not, and nothing moves.
  const before = handoffRefs(b);
  for (const args of [["cancel", "z", "--reason", "x"], ["claim", "z"], ["claim", "s"], ["lease", "docs/x.md"], ["lease", "docs/x.md", "--exclusive"]]) {
    const r = cli([...args, "--json"], { cwd: b, agent: "bob" });
    assert.is(r.code, 3, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
    assert.is(r.json.error.code, "quarantined", args.join(" "));
    assert.match(r.json.error.message, /comes from a newer git-handoff .*; upgrade to change it/);
  }
  assert.is(handoffRefs(b), before, "nothing was written");

  // claim --next takes y, the one ready task whose claim writes neither (no scope: no lease write),
  // and counts s and z as passed over.
  const c = ok(cli(["claim", "--next", "--json"], { cwd: b, agent: "bob" }));
  assert.is(c.json.id, "y");
  assert.is(c.json.skipped_newer, 2);
  const none = cli(["claim", "--next", "--json"], { cwd: b, agent: "carol" });
  assert.is(none.json.error.code, "no_task_ready");
  assert.match(none.json.error.message, /2 ready task\(s\) skipped \(s, z\): the remote holds them, or the lease set their scope needs, from a newer git-handoff/);
});

test("a lease set written by a newer git-handoff in this clone: code newer_format, and doctor reports it as one failed check and goes on", async () => {
  const repo = tempRepo();
  await storeLease({ cwd: repo, agent: "a" }, ["x.ts"]);
  const tip = gitOut(repo, "rev-parse", "refs/handoff/leases");
  const t = tree(repo, { format: "git-handoff 4\n", leases: { tree: tree(repo, { "x.json": "{}\n" }) } });
  setRef(repo, "refs/handoff/leases", commit(repo, { tree: t, parent: tip, author: "a", message: "x\n" }));
  const c = cli(["check", "x.ts", "--json"], { cwd: repo, agent: "b" });
  assert.is(c.code, 3);
  assert.is(c.json.error.code, "newer_format");
  assert.match(c.json.error.message, /refs\/handoff\/leases was written by a newer git-handoff/);
  const d = cli(["doctor", "--json"], { cwd: repo, agent: "b" });
  assert.is(d.code, 2, d.stderr);
  const checks = d.json.checks as { name: string; status: string; detail: string }[];
  const failed = checks.filter((x) => x.status === "fail");
  assert.equal(failed.map((x) => x.name), ["newer-format"]);
  assert.match(failed[0]!.detail, /refs\/handoff\/leases was written by a newer git-handoff .*not checked: leases/);
  for (const name of ["tentative", "invariants", "dependencies", "format", "objects"]) assert.ok(checks.some((x) => x.name === name), `${name} still runs`);
});

test.run();
