// `loop run` end to end: real processes, a real repository with the six tasks, a scripted
// agent per unit in its own worktree; each merge strategy; the review gate; cleanup.
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, handoffRefs, tempDir, tempRepo } from "./support/repo.ts";
import { linkedWorktrees, loopRecord, loopRepo, SIX, taskStatus, unitHomes } from "./support/loop.ts";

test.after(cleanupTemp);

test("six tasks: three units run in parallel worktrees, merged in plan order, the checked-out main fast-forwarded, all cleaned up", async () => {
  const l = await loopRepo(SIX);
  const main0 = gitOut(l.repo, "rev-parse", "main");
  const r = cli(["loop", "run", "--agent-cmd", l.agent, "--max-worktrees", "2", "--poll", "100ms", "--json"], { cwd: l.repo, agent: "lead", env: { ...l.env, LOOP_TEST_PAIR: "1" } });
  assert.is(r.code, 0, r.stderr);
  const rec = r.json;
  assert.is(rec.phase, "finished");
  assert.equal(rec.units.map((u: any) => [u.id, u.tasks, u.phase]), [["u1", ["api", "users"], "merged"], ["u2", ["c1", "c2", "c3"], "merged"], ["u3", ["docs"], "merged"]]);
  // One agent per unit, each in its own worktree under the unit's name, each started once; u1 and
  // u2 waited for each other (LOOP_TEST_PAIR), so they ran at the same time.
  const starts = l.starts();
  assert.equal(starts.map((s) => s.unit).sort(), ["u1", "u2", "u3"]);
  assert.equal(new Set(starts.map((s) => s.cwd)).size, 3);
  for (const s of starts) {
    assert.is(s.agent, `loop-${rec.id}-${s.unit}`);
    assert.match(s.cwd, `handoff-loop-${rec.id}-${s.unit}`);
  }
  assert.match(r.stderr, "u3: main moved on since u3 started");
  // The chain was done in dependency order by one agent.
  assert.equal(readFileSync(join(l.dir, "done"), "utf8").split("\n").filter((x) => ["c1", "c2", "c3"].includes(x)), ["c1", "c2", "c3"]);
  for (const t of SIX) assert.is(taskStatus(l.repo, t.id), "done");
  // main holds every file; the main worktree (which has main checked out) was fast-forwarded and is clean.
  for (const f of ["src/api/index.ts", "src/api/users.ts", "lib/one.ts", "lib/two.ts", "lib/three.ts", "docs/guide.md"]) assert.ok(existsSync(join(l.repo, f)), f);
  assert.is(gitOut(l.repo, "status", "--porcelain"), "");
  assert.is(gitOut(l.repo, "rev-parse", "HEAD"), gitOut(l.repo, "rev-parse", "main"));
  // merge: one merge commit per unit, in plan order, first parents the previous main.
  const merges = gitOut(l.repo, "log", "--first-parent", "--format=%s", `${main0}..main`).split("\n").reverse();
  assert.equal(merges, [`loop ${rec.id} u1: api, users`, `loop ${rec.id} u2: c1, c2, c3`, `loop ${rec.id} u3: docs`]);
  assert.is(gitOut(l.repo, "rev-list", "--merges", "--count", `${main0}..main`), "3");
  // Cleanup: no worktree, no unit branch, no unit folder; the agents' sessions ended.
  assert.equal(linkedWorktrees(l.repo), []);
  assert.is(gitOut(l.repo, "branch", "--list", "loop/*"), "");
  assert.equal(unitHomes(l.dir, rec.id), []);
  const agents = cli(["agents", "--json"], { cwd: l.repo }).json;
  const list: any[] = Array.isArray(agents) ? agents : agents.agents;
  for (const a of list.filter((x: any) => x.agent.startsWith("loop-"))) assert.ok(a.ended_at, `${a.agent} still has a session`);
  // loop status, from another worktree, shows the same record.
  const other = join(tempDir(), "other");
  gitOut(l.repo, "worktree", "add", "-q", "--detach", other);
  const s = cli(["loop", "status", "--json"], { cwd: other });
  assert.is(s.code, 0, s.stderr);
  assert.equal(s.json, rec);
  const text = cli(["loop", "status"], { cwd: other });
  assert.match(text.stdout, `${rec.id}: finished, into main by merge`);
  assert.match(text.stdout, "u2 merged: c1 c2 c3");
  // Each change of the record is an event: the loop's story in `events`.
  const events = cli(["events", "--type", "loop"], { cwd: l.repo }).stdout;
  assert.match(events, `note="${rec.id}: started: u1 (api, users); u2 (c1, c2, c3)`);
  for (const note of [`${rec.id}: u2 merged`, `${rec.id}: u3 cleaned up`, `${rec.id}: finished: merged u1 u2 u3`]) assert.match(events, `note=${JSON.stringify(note)}`);
});

test("bad input: one line, a stable code, nothing written; nothing ready: no loop at all", async () => {
  const l = await loopRepo([{ id: "x", objective: "write x.txt", scope: ["x.txt"] }]);
  const before = handoffRefs(l.repo, { logs: true });
  const cases: [string[], number, string][] = [
    [["loop", "run"], 2, "loop run needs one of --agent-cmd CMD or --with claude|codex"],
    [["loop", "run", "--agent-cmd", "true", "--with", "claude"], 2, "loop run needs one of"],
    [["loop", "run", "--with", "gemini"], 2, "--with \"gemini\": the clients are claude and codex"],
    // The command runs in each unit's fresh worktree: a relative path is taken from where loop run
    // starts, checked there, before any unit starts (not once per unit, as exit 127).
    [["loop", "run", "--agent-cmd", "./no-such-script.sh"], 2, `--agent-cmd ./no-such-script.sh: there is no ${l.repo}/no-such-script.sh (a relative path is taken from the folder loop run starts in)`],
    [["loop", "run", "--agent-cmd", "./README.md --fast"], 2, `--agent-cmd ./README.md: ${l.repo}/README.md is not executable (chmod +x it)`],
    [["loop", "run", "--agent-cmd", "true", "--merge", "octopus"], 2, "--merge takes merge, squash, rebase"],
    [["loop", "run", "--agent-cmd", "true", "--max-worktrees", "100"], 2, "--max-worktrees must be between 1 and 64"],
    [["loop", "run", "--agent-cmd", "true", "--into", "nope"], 4, "no branch nope here"],
    [["loop", "run", "--agent-cmd", "true", "--into", "-x"], 2, "not a branch name"],
    [["loop", "stop", "--timeout", "soon"], 2, "--timeout"],
  ];
  for (const [args, code, message] of cases) {
    const r = cli([...args, "--json"], { cwd: l.repo, agent: "lead" });
    assert.is(r.code, code, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(" "));
    assert.is(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.is(handoffRefs(l.repo, { logs: true }), before, args.join(" "));
  }
  // A client not on PATH is refused before any unit starts, as the worker refuses it (exit 5).
  const missing = cli(["loop", "run", "--with", "claude"], { cwd: l.repo, agent: "lead", env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin` } });
  assert.is(missing.code, 5, missing.stderr);
  assert.match(missing.stderr, "claude is not on PATH: install it (npm install -g @anthropic-ai/claude-code) or give --agent-cmd CMD");
  assert.is(handoffRefs(l.repo, { logs: true }), before);
  assert.equal(linkedWorktrees(l.repo), []);
  const empty = tempRepo();
  const none = cli(["loop", "run", "--agent-cmd", "true"], { cwd: empty });
  assert.is(none.code, 0, none.stderr);
  assert.match(none.stdout, "nothing to do: no task is ready");
  assert.is(gitOut(empty, "for-each-ref", "refs/handoff/loop"), "");
  assert.is(cli(["loop", "status", "--json"], { cwd: empty }).stdout.trim(), "null");
  assert.match(cli(["loop", "status"], { cwd: empty }).stdout, "no loop has run here");
  assert.match(cli(["loop", "stop"], { cwd: empty }).stdout, "no loop has run here");
  assert.equal(loopRecordOrNull(empty), null);
});

test("the docs' example: --agent-cmd ./do-unit.sh, a script in your checkout that is not committed, runs in every unit", async () => {
  const l = await loopRepo([
    { id: "api", objective: "write src/api/index.ts", scope: ["src/api/**"] },
    { id: "docs", objective: "write docs/guide.md", scope: ["docs/**"] },
  ]);
  writeFileSync(join(l.repo, "do-unit.sh"), `#!/bin/sh\nexec ${l.agent}\n`);
  chmodSync(join(l.repo, "do-unit.sh"), 0o755);
  const r = cli(["loop", "run", "--agent-cmd", "./do-unit.sh", "--poll", "100ms", "--json"], { cwd: l.repo, agent: "lead", env: l.env });
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.json.units.map((u: any) => u.phase), ["merged", "merged"]);
  for (const f of ["src/api/index.ts", "docs/guide.md"]) assert.ok(existsSync(join(l.repo, f)), f);
  assert.is(gitOut(l.repo, "status", "--porcelain"), "?? do-unit.sh");
});

function loopRecordOrNull(repo: string): unknown {
  try {
    return loopRecord(repo);
  } catch {
    return null;
  }
}

test.run();
