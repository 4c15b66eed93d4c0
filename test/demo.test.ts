// The three-session demo as a test: `npm run demo` itself (a real process, --keep), every expected
// catch asserted, the kept repository explored with plain git and the CLI, the stats figures exact
// (the demo's clock is scripted); and proof that the demo fails when a catch does not happen.
import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runDemo } from "../src/demo/story.ts";
import { bundled } from "./support/bundle.ts";
import { cleanEnv, cli, gitOut } from "./support/repo.ts";

const ROOT = resolve(import.meta.dirname, "..");
/** `npm run demo`'s script, src/demo/main.ts, bundled (support/bundle.ts): a plain node start, not tsx's ~0.6 CPU-s. */
const DEMO = () => bundled(resolve(ROOT, "src/demo/main.ts"), { metaDirname: resolve(ROOT, "src/demo") });

const CATCHES = [
  "B's claim of tests refused while contract is not done (exit 3, blocked)",
  "C's duplicate claim of contract refused (exit 3, held by session-a)",
  "pre-edit hook denies C's edit of src/server.js (exclusive lease of session-a)",
  "git pre-commit hook refuses C's commit touching src/server.js",
  "pre-edit hook warns A that session-c leases config/app.json (context, not a block)",
  "pre-commit warns A about config/app.json and lets the commit through",
  "conflict preview finds the textual conflict in config/app.json between a/contract and c/config",
  "verification fails on B's branch without A's commit: recorded, task stays with B (exit 3)",
];

test("npm run demo -- --keep: exit 0, every catch happened, the repo is left to explore", () => {
  const r = spawnSync(process.execPath, [DEMO(), "--keep"], { cwd: ROOT, env: cleanEnv(), encoding: "utf8", timeout: 300_000 });
  assert.is(r.status, 0, `${r.stdout.slice(-3000)}\n${r.stderr}`);
  for (const c of CATCHES) assert.ok(r.stdout.includes(`caught: ${c}`), `the story shows: ${c}`);
  assert.not.match(r.stdout, /MISSING:/);
  assert.match(r.stdout, /demo ok: all \d+ expectations met/);
  // The story: who did what, the overview, the numbers.
  assert.match(r.stdout, /== Overview: git handoff status/);
  assert.match(r.stdout, /== What coordination caught: git handoff stats/);
  assert.ok(r.stdout.indexOf("git handoff status") < r.stdout.lastIndexOf("duplicate claims refused"), "stats come last");

  const repo = /repository kept: (\S+)/.exec(r.stdout)?.[1];
  assert.ok(repo && existsSync(repo), "the kept repository's path is printed");
  try {
    // Plain git shows the state; the CLI explores it.
    const refs = gitOut(repo!, "for-each-ref", "--format=%(refname)", "refs/handoff/");
    for (const ref of ["refs/handoff/tasks/contract", "refs/handoff/tasks/tests", "refs/handoff/tasks/config", "refs/handoff/agents/session-a", "refs/handoff/log/session-b", "refs/handoff/log/session-c", "refs/handoff/leases"]) {
      assert.ok(refs.split("\n").includes(ref), `${ref} in ${refs}`);
    }
    assert.match(gitOut(repo!, "log", "--format=%s", "refs/handoff/log/session-c"), /claude-pre-tool-use deny for session-c: src\/server\.js/);
    const status = cli(["status", "--json", "--no-conflicts"], { cwd: repo!, agent: "explorer" });
    assert.is(status.code, 0, status.stderr);
    // Exact figures: the demo's clock is scripted, so the numbers are known.
    const s = cli(["stats", "--json"], { cwd: repo!, agent: "explorer" }).json;
    assert.equal(s.claims, { granted: 3, refused_duplicate: 1, refused_blocked: 1 });
    assert.equal({ deny: s.hooks.deny, warn: s.hooks.warn, info: s.hooks.info }, { deny: 2, warn: 2, info: 0 });
    assert.equal(s.hooks.by_hook, { "claude-pre-tool-use": { deny: 1, warn: 1, info: 0 }, "pre-commit": { deny: 1, warn: 1, info: 0 } });
    assert.equal(s.conflicts, { predicted: 1, paths: 1 });
    assert.equal([s.handoffs.delivered, s.handoffs.acknowledged, s.handoffs.ack_rate, s.handoffs.time_to_ack.max_ms], [1, 1, 1, 4 * 60_000]);
    assert.equal([s.blocked.tasks, s.blocked.unblocked, s.blocked.total_ms], [1, 1, 17 * 60_000]);
    assert.equal(s.review, { verified_passed: 2, verified_failed: 1, accepted: 2, rejected: 0 });
  } finally {
    rmSync(dirname(repo!), { recursive: true, force: true });
  }
});

test("the demo fails when an expected catch does not happen (no pre-commit hook)", () => {
  const lines: string[] = [];
  const r = runDemo({ out: (l) => lines.push(l), withoutPreCommitHook: true });
  assert.is(r.ok, false);
  const missing = r.expectations.filter((e) => !e.ok).map((e) => e.label);
  assert.ok(missing.includes("git pre-commit hook refuses C's commit touching src/server.js"), missing.join("; "));
  assert.ok(!missing.includes("pre-edit hook denies C's edit of src/server.js (exclusive lease of session-a)"), "the other catches still happen");
  assert.ok(lines.some((l) => l.includes("MISSING: git pre-commit hook refuses")));
  assert.not.ok(existsSync(r.root), "without --keep the temp folder is removed");
});

test("npm run demo rejects unknown arguments", () => {
  const r = spawnSync(process.execPath, [DEMO(), "--kep"], { cwd: ROOT, env: cleanEnv(), encoding: "utf8" });
  assert.is(r.status, 2);
  assert.match(r.stderr, /usage: npm run demo \[-- --keep\]/);
});

test.run();
