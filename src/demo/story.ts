// The three-session demo: A changes the endpoint's contract and hands it over; B refines the tests,
// blocked on A until the handoff arrives; C tunes the shared config and runs into A's lease (pre-edit
// hook, then pre-commit) and into a real textual conflict (conflict preview). Every step is the real
// CLI, real hooks and real git in separate processes; every expected catch is checked.
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Stats } from "../core/stats.ts";
import { Narrator, bold, type Expectation } from "./narrator.ts";
import { Sandbox, type Run, type Session } from "./sandbox.ts";

export interface DemoResult {
  ok: boolean;
  repo: string;
  root: string;
  expectations: Expectation[];
  stats: Stats | null;
}

export interface DemoOptions {
  keep?: boolean;
  out?: (line: string) => void;
  /** Where the scripted clock starts (default: 28 minutes ago, so the story, about 27 minutes long, ends about now). */
  start?: Date;
  /** Removes the git pre-commit hook after init: the run must then fail (the test proves it). */
  withoutPreCommitHook?: boolean;
}

const VERIFY = "node --test test/";

function json<T>(r: Run): T | null {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    return null;
  }
}

export function runDemo(opts: DemoOptions = {}): DemoResult {
  const out = opts.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const box = new Sandbox(opts.start ?? new Date(Date.now() - 28 * 60_000));
  const n = new Narrator(out, () => box.clock());
  let stats: Stats | null = null;
  try {
    stats = story(box, n, opts);
  } catch (e) {
    n.expect("the demo ran to its end", false, (e as Error).message);
  } finally {
    if (!opts.keep) box.remove();
  }
  return { ok: n.failed.length === 0, repo: box.repo, root: box.root, expectations: n.expectations, stats };
}

function story(box: Sandbox, n: Narrator, opts: DemoOptions): Stats | null {
  // --- The repository and the team -------------------------------------------------------------
  n.scene("Setup: the sample service, git-handoff, three sessions in three worktrees");
  box.createRepo();
  n.say("lead", "creates the sample service repo (GET /users/:id, its tests, config/app.json)");
  const init = box.handoff(null, ["init"]);
  n.say("lead", "git handoff init: git hooks and agent hooks installed");
  n.show(init.stdout.split("\n\nMCP server")[0]!, 5);
  n.expect("git handoff init installed the pre-commit hook", init.code === 0 && existsSync(join(box.repo, ".git", "hooks", "pre-commit")), init.stderr.trim(), "checked");
  if (opts.withoutPreCommitHook) rmSync(join(box.repo, ".git", "hooks", "pre-commit"));
  box.mustGit(null, ["add", "-A"]);
  box.mustGit(null, ["commit", "-q", "-m", "git-handoff: agent hook configuration"]);
  n.say("lead", "commits the agent hook configuration (.claude/settings.json, ...) so every worktree has it");

  const A = box.addWorktree("session-a", "a/contract");
  const B = box.addWorktree("session-b", "b/tests");
  const C = box.addWorktree("session-c", "c/config");
  for (const s of [A, B, C]) n.say("lead", `adds worktree ${s.dir} on branch ${s.branch} for ${s.agent}`);

  const add = (args: string[]) => {
    const r = box.handoff(null, ["task", "add", ...args]);
    if (r.code !== 0) throw new Error(`task add failed: ${r.stderr.trim()}`);
  };
  add(["GET /users/:id also returns the user's email (a contract change)", "--id", "contract", "--scope", "src/server.js", "--scope", "src/users.js", "--exclusive", "--verify", VERIFY]);
  add(["refine the endpoint's tests for the new contract", "--id", "tests", "--scope", "test/**", "--verify", VERIFY, "--after", "contract"]);
  add(["tune the shared config (response cache)", "--id", "config", "--scope", "config/app.json"]);
  n.say("lead", "adds three tasks: contract (exclusive on src/server.js, src/users.js), tests (after contract), config");

  const start = (s: Session, objective: string, files: string, awaits?: string) => {
    const r = box.handoff(s, ["session", "start", "--objective", objective, "--files", files, ...(awaits ? ["--awaits", awaits] : [])]);
    if (r.code !== 0) throw new Error(`session start failed: ${r.stderr.trim()}`);
  };
  start(A, "change the users endpoint's contract", "src/**");
  start(B, "refine the endpoint's tests", "test/**", "the new users contract from session-a");
  start(C, "tune the shared config", "config/**");
  n.say("A B C", "each declares its session (objective, planned files, what it awaits)");

  // --- A takes the contract ----------------------------------------------------------------------
  box.advance(1);
  n.scene("Session A claims the contract change");
  const claimA = box.handoff(A, ["claim", "contract"]);
  n.say("A", "git handoff claim contract");
  n.show(claimA, 2);
  n.expect("A holds contract and an exclusive lease on its files", claimA.code === 0, claimA.stderr.trim(), "checked");

  // --- B is blocked --------------------------------------------------------------------------------
  box.advance(1);
  n.scene("Session B must refine the tests, but they wait on A's contract");
  const claimB = box.handoff(B, ["claim", "tests"]);
  n.say("B", "git handoff claim tests");
  n.show(claimB, 4);
  n.expect("B's claim of tests refused while contract is not done (exit 3, blocked)", claimB.code === 3 && /blocked/.test(claimB.stderr), `exit ${claimB.code}`);
  const inboxEarly = json<unknown[]>(box.handoff(B, ["inbox", "--json"]));
  n.say("B", `git handoff inbox: ${inboxEarly?.length ?? "?"} handoffs (nothing to start from yet)`);

  // --- C: duplicate claim, then its own task -------------------------------------------------------
  box.advance(1);
  n.scene("Session C tunes the shared config");
  const dup = box.handoff(C, ["claim", "contract"]);
  n.say("C", "git handoff claim contract (it also wants to touch the endpoint)");
  n.show(dup, 2);
  n.expect("C's duplicate claim of contract refused (exit 3, held by session-a)", dup.code === 3 && /held by session-a/.test(dup.stderr), `exit ${dup.code}`);
  const claimC = box.handoff(C, ["claim", "config"]);
  n.say("C", "git handoff claim config: leases config/app.json (shared)");
  n.expect("C holds config", claimC.code === 0, claimC.stderr.trim(), "checked");

  box.advance(2);
  const portOld = "export function start(port = config.port) {";
  const portNew = "export function start(port = Number(process.env.PORT ?? config.port)) {";
  const preEdit = box.claudeEdit(C, "src/server.js", portOld, portNew);
  n.say("C", "Claude Code's Edit on src/server.js -> PreToolUse hook (git handoff hook claude-pre-tool-use)");
  n.show(preEdit.answer?.hookSpecificOutput?.permissionDecisionReason ?? preEdit.stdout + preEdit.stderr, 3);
  n.expect(
    "pre-edit hook denies C's edit of src/server.js (exclusive lease of session-a)",
    preEdit.answer?.hookSpecificOutput?.permissionDecision === "deny" && /session-a/.test(preEdit.answer.hookSpecificOutput.permissionDecisionReason ?? ""),
    `hook printed ${JSON.stringify(preEdit.stdout.slice(0, 200))}`,
  );

  box.advance(1);
  box.edit(C, "src/server.js", portOld, portNew);
  box.edit(C, "config/app.json", `"emailInResponses": false`, `"emailInResponses": false,\n    "cacheSeconds": 30`);
  n.say("C", "edits src/server.js anyway (an editor without the agent hook) and config/app.json, then git commit -a");
  const commitC = box.git(C, ["commit", "-q", "-a", "-m", "config: response cache; PORT from env"]);
  n.show(commitC.stderr, 3);
  n.expect("git pre-commit hook refuses C's commit touching src/server.js", commitC.code !== 0 && /commit refused/.test(commitC.stderr), `exit ${commitC.code}`);
  box.mustGit(C, ["checkout", "--", "src/server.js"]);
  const commitC2 = box.git(C, ["commit", "-q", "-a", "-m", "config: response cache (cacheSeconds: 30)"]);
  n.say("C", "drops the src/server.js change and commits config/app.json alone");
  n.expect("C's commit of its own file goes through", commitC2.code === 0, commitC2.stderr.trim(), "checked");

  // --- A does the work -----------------------------------------------------------------------------
  box.advance(6);
  n.scene("Session A changes the contract");
  const bodyOld = "return { status: 200, body: { id: user.id, name: user.name } };";
  const bodyNew = "return { status: 200, body: { id: user.id, name: user.name, email: user.email } };";
  const editA = box.claudeEdit(A, "src/server.js", bodyOld, bodyNew);
  box.edit(A, "src/server.js", bodyOld, bodyNew);
  box.edit(A, "src/server.js", "// GET /users/:id -> {id, name}", "// GET /users/:id -> {id, name, email}");
  n.say("A", "Claude Code's Edit on src/server.js: its own lease, the hook says nothing; the response gains email");
  n.expect("A's own edit is not blocked", editA.code === 0 && editA.answer?.hookSpecificOutput?.permissionDecision !== "deny", editA.stdout.slice(0, 200), "checked");
  const flagA = box.claudeEdit(A, "config/app.json", `"emailInResponses": false`, `"emailInResponses": true`);
  box.edit(A, "config/app.json", `"emailInResponses": false`, `"emailInResponses": true`);
  n.say("A", "Claude Code's Edit on config/app.json (the feature flag): C leases that file");
  n.show(flagA.answer?.hookSpecificOutput?.additionalContext ?? flagA.stdout, 2);
  n.expect(
    "pre-edit hook warns A that session-c leases config/app.json (context, not a block)",
    flagA.answer?.hookSpecificOutput?.permissionDecision === undefined && /warn: config\/app\.json is leased by session-c/.test(flagA.answer?.hookSpecificOutput?.additionalContext ?? ""),
    flagA.stdout.slice(0, 200),
  );
  const commitA = box.git(A, ["commit", "-q", "-a", "-m", "users: GET /users/:id returns email"]);
  n.say("A", "git commit -a");
  n.show(commitA.stderr, 2);
  n.expect("pre-commit warns A about config/app.json and lets the commit through", commitA.code === 0 && /warn: config\/app\.json/.test(commitA.stderr), `exit ${commitA.code}`);
  const commitOfA = box.mustGit(A, ["rev-parse", "HEAD"]);
  // Hooks do not count as a sign of life; any command does. The preview covers active sessions.
  box.handoff(A, ["heartbeat"]);

  // --- The conflict preview ------------------------------------------------------------------------
  box.advance(1);
  n.scene("Conflict preview: what no lease can see");
  const conflicts = box.handoff(C, ["conflicts"]);
  n.say("C", "git handoff conflicts (git merge-tree over the active sessions' branches, no worktree touched)");
  n.show(conflicts, 6);
  const report = json<{ pairs: { a: { branch: string }; b: { branch: string }; conflicts: string[] }[] }>(box.handoff(C, ["conflicts", "--json"]));
  const hit = report?.pairs.find((p) => [p.a.branch, p.b.branch].sort().join(" ") === "a/contract c/config" && p.conflicts.includes("config/app.json"));
  n.expect("conflict preview finds the textual conflict in config/app.json between a/contract and c/config", !!hit, conflicts.stdout.trim().split("\n")[0] ?? "");
  n.note("C will keep both keys when the branches meet; the warning A got was a real conflict");

  // --- A hands over --------------------------------------------------------------------------------
  box.advance(2);
  n.scene("Session A hands the result over, verification, review");
  const ho = box.handoff(A, [
    "handoff", "contract",
    "--commit", commitOfA,
    "--contract", "GET /users/:id now returns {id, name, email}; 404 unchanged",
    "--verify", VERIFY,
    "--question", "should email be omitted for users without one?",
  ]);
  n.say("A", "git handoff handoff contract --commit HEAD --contract ... --verify 'node --test test/' --question ...");
  n.show(ho, 3);
  n.expect("A's handoff is recorded with the commit", ho.code === 0 && ho.stdout.includes(commitOfA), ho.stderr.trim(), "checked");
  const doneA = box.handoff(A, ["done", "contract", "--commit", commitOfA]);
  n.say("A", "git handoff done contract: runs the task's verify command, then the task waits for review");
  n.show(doneA, 3);
  n.expect("A's verification passes and contract goes to review", doneA.code === 0, `exit ${doneA.code}: ${doneA.stderr.trim()}`, "checked");
  box.advance(2);
  const acceptA = box.handoff(null, ["review", "accept", "contract"]);
  n.say("lead", "git handoff review accept contract");
  n.show(acceptA, 3);
  n.expect("review accepted: contract is done and tests is unblocked", acceptA.code === 0 && /tests/.test(acceptA.stdout), acceptA.stderr.trim(), "checked");
  const leftA = json<{ task: string | null; agent: string }[]>(box.handoff(null, ["leases", "--json"])) ?? [];
  n.expect("nobody holds contract's files any more: its leases ended with the task", !leftA.some((l) => l.task === "contract"), JSON.stringify(leftA), "checked");

  // --- B receives it, once -------------------------------------------------------------------------
  box.advance(1);
  n.scene("Session B: unblocked, receives the handoff exactly once");
  const claimB2 = box.handoff(B, ["claim", "tests"]);
  n.say("B", "git handoff claim tests (the claim shows what came with it)");
  n.show(claimB2.stdout.split("\n\n").slice(1).join("\n"), 4);
  n.expect("B claims tests now that contract is done", claimB2.code === 0, claimB2.stderr.trim(), "checked");
  const inbox = box.handoff(B, ["inbox"]);
  const inboxJson = json<{ id: string }[]>(box.handoff(B, ["inbox", "--json"])) ?? [];
  n.say("B", "git handoff inbox");
  n.show(inbox, 10);
  n.expect("B's inbox holds A's handoff, once", inboxJson.length === 1 && inboxJson[0]!.id === "contract#1", `inbox: ${JSON.stringify(inboxJson.map((e) => e.id))}`, "checked");
  box.advance(1);
  const ack = box.handoff(B, ["ack", "contract#1"]);
  n.say("B", "git handoff ack contract#1");
  const after = json<unknown[]>(box.handoff(B, ["inbox", "--json"])) ?? [null];
  n.expect("after the ack the handoff is not delivered again", ack.code === 0 && after.length === 0, `inbox after ack: ${after.length}`, "checked");

  box.advance(4);
  const testOld = `  assert.equal(r.body.name, "Ada Lovelace");`;
  const testNew = `${testOld}\n  assert.equal(r.body.email, "ada@example.org");`;
  const editB = box.claudeEdit(B, "test/users.test.js", testOld, testNew);
  box.edit(B, "test/users.test.js", testOld, testNew);
  n.say("B", "Claude Code's Edit on test/users.test.js (its own lease): asserts the new email field");
  n.expect("B's edit is not blocked", editB.answer?.hookSpecificOutput?.permissionDecision !== "deny", editB.stdout.slice(0, 200), "checked");
  const commitB = box.git(B, ["commit", "-q", "-a", "-m", "tests: GET /users/:id returns email"]);
  n.expect("B's commit goes through", commitB.code === 0, commitB.stderr.trim(), "checked");
  const early = box.handoff(B, ["done", "tests"]);
  n.say("B", "git handoff done tests, before taking A's commit: the verification runs");
  n.show(early.stderr, 2);
  n.expect("verification fails on B's branch without A's commit: recorded, task stays with B (exit 3)", early.code === 3, `exit ${early.code}`);
  box.advance(1);
  box.mustGit(B, ["merge", "-q", "--no-edit", commitOfA]);
  n.say("B", `git merge ${commitOfA.slice(0, 12)} (the commit named in the handoff)`);
  const doneB = box.handoff(B, ["done", "tests"]);
  n.say("B", "git handoff done tests: verification runs, the task waits for review");
  n.show(doneB, 2);
  box.advance(1);
  const acceptB = box.handoff(null, ["review", "accept", "tests"]);
  n.say("lead", "git handoff review accept tests");
  n.expect("B's verified tests accepted", doneB.code === 0 && acceptB.code === 0, `${doneB.stderr.trim()} ${acceptB.stderr.trim()}`, "checked");

  box.advance(1);
  const doneC = box.handoff(C, ["done", "config", "--note", "conflicts with a/contract in config/app.json: keep both keys"]);
  n.say("C", "git handoff done config --note 'conflicts with a/contract in config/app.json: keep both keys'");
  n.expect("C's config task is done", doneC.code === 0, doneC.stderr.trim(), "checked");

  const leftAll = json<unknown[]>(box.handoff(null, ["leases", "--json"])) ?? [null];
  const checkAll = [A, B, C].map((who) => box.handoff(who, ["check", "src/server.js", "test/users.test.js", "config/app.json"]));
  n.expect("every task finished: nobody holds anything, check is ok for everyone", leftAll.length === 0 && checkAll.every((c) => c.code === 0), `leases: ${JSON.stringify(leftAll)}`, "checked");

  // --- The overview and the numbers ----------------------------------------------------------------
  n.scene("Overview: git handoff status");
  const status = box.handoff(null, ["status"]);
  n.raw(status.stdout);
  n.scene("What coordination caught: git handoff stats");
  const statsText = box.handoff(null, ["stats"]);
  n.raw(statsText.stdout);
  const stats = json<Stats>(box.handoff(null, ["stats", "--json"]));
  n.out("");
  n.expect("stats counts the duplicate claim", (stats?.claims.refused_duplicate ?? 0) >= 1, JSON.stringify(stats?.claims), "checked");
  n.expect("stats counts the blocked claim and B's blocked time", (stats?.claims.refused_blocked ?? 0) >= 1 && (stats?.blocked.unblocked ?? 0) >= 1, JSON.stringify(stats?.blocked), "checked");
  n.expect("stats counts the hook denials (pre-edit + pre-commit) and warnings", (stats?.hooks.deny ?? 0) >= 2 && (stats?.hooks.warn ?? 0) >= 2, JSON.stringify(stats?.hooks), "checked");
  n.expect("stats counts the predicted conflict", (stats?.conflicts.predicted ?? 0) >= 1, JSON.stringify(stats?.conflicts), "checked");
  n.expect("stats counts the handoff and its acknowledgment", stats?.handoffs.delivered === 1 && stats.handoffs.acknowledged === 1, JSON.stringify(stats?.handoffs), "checked");
  return stats;
}

export function summary(r: DemoResult, kept: boolean): string {
  const lines = [""];
  const failed = r.expectations.filter((e) => !e.ok);
  lines.push(bold(failed.length ? `demo FAILED: ${failed.length} of ${r.expectations.length} expectations not met` : `demo ok: all ${r.expectations.length} expectations met`));
  for (const f of failed) lines.push(`  missing: ${f.label}${f.detail ? ` (${f.detail})` : ""}`);
  if (kept) {
    lines.push(`repository kept: ${r.repo}   (worktrees: ${r.root}/wt-session-{a,b,c})`);
    lines.push(`  cd ${r.repo} && git handoff status`);
    lines.push(`  git log --oneline refs/handoff/tasks/contract     git for-each-ref refs/handoff/`);
    lines.push(`  git log refs/handoff/log/session-c                 git handoff events`);
    lines.push(`  (git-handoff for that shell: ${r.root}/bin/git-handoff, or PATH=${r.root}/bin:$PATH)`);
  }
  return lines.join("\n");
}
