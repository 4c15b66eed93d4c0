// The compare run (`npm run compare`): with git-handoff none of the designed failures happens;
// without it each happens at least once; and the report's figures are what git itself says when
// this test recounts them from the kept repositories (its own git calls, real merges).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compare, reportText, type CompareResult } from "../src/demo/compare/compare.ts";
import { bundled } from "./support/bundle.ts";

function git(repo: string, ...args: string[]): { code: number; out: string } {
  const r = spawnSync("git", args, { cwd: repo, encoding: "utf8" });
  return { code: r.status ?? 1, out: (r.stdout ?? "").trim() };
}

let result: CompareResult;
test.before(() => {
  result = compare({ agents: 3, tasks: 5, seed: 1, keep: true });
});
test.after(() => {
  for (const repo of Object.values(result?.repos ?? {})) rmSync(dirname(repo), { recursive: true, force: true });
});

test("with git-handoff: no task twice, no owned file edited, no conflict, every handoff delivered once", () => {
  const w = result.with;
  assert.is(w.tasks_merged, 5);
  assert.is(w.tasks_done_twice, 0);
  assert.is(w.owned_file_edits, 0);
  assert.is(w.integration_conflicts, 0);
  assert.is(w.dependent_work_redone, 0);
  assert.is(w.verification_failures_after_merge, 0);
  assert.is(w.handoffs_delivered, 1, "contract's handoff reached the tests task");
  assert.ok(w.handoff_deliveries <= 1, "and at most once (none needed when the producer takes the dependent task itself)");
  assert.ok(w.coordination_calls > 0 && w.coordination_ms > 0, "the cost of coordination is measured");
});

test("without it, each designed failure happens at least once", () => {
  const n = result.without;
  assert.is(n.tasks_merged, 5, "the work still gets done, eventually");
  assert.ok(n.tasks_done_twice >= 1, `duplicate pickup: ${n.tasks_done_twice}`);
  assert.ok(n.owned_file_edits >= 1, `edits of owned files: ${n.owned_file_edits}`);
  assert.ok(n.integration_conflicts >= 1, `conflicts: ${n.integration_conflicts}`);
  assert.ok(n.dependent_work_redone >= 1, `dependent work redone: ${n.dependent_work_redone}`);
  assert.is(n.handoffs_delivered, 0, "no channel: nothing crosses between sessions");
  assert.is(n.coordination_calls, 0);
});

/** Distinct authors of the commits naming each task, over every branch. */
function authorsPerTask(repo: string): Map<string, Set<string>> {
  const m = new Map<string, Set<string>>();
  for (const line of git(repo, "log", "--branches", "--format=%an|%(trailers:key=Task,valueonly,separator=)").out.split("\n")) {
    const [author, task] = line.split("|");
    if (!task) continue;
    (m.get(task) ?? m.set(task, new Set()).get(task)!).add(author!);
  }
  return m;
}

/** Merges each branch that never reached main into main as it was when that branch's work ended. */
function conflictsByMerging(repo: string): number {
  const unmerged = git(repo, "for-each-ref", "--no-merged=main", "--format=%(refname:short) %(committerdate:unix)", "refs/heads/")
    .out.split("\n")
    .filter(Boolean)
    .filter((l) => !l.endsWith("/home") && !/\/home /.test(l));
  const mainline = git(repo, "log", "--first-parent", "--reverse", "--format=%H %ct", "main")
    .out.split("\n")
    .map((l) => ({ oid: l.split(" ")[0]!, time: Number(l.split(" ")[1]) }));
  const scratch = mkdtempSync(join(tmpdir(), "compare-recount-"));
  let conflicts = 0;
  try {
    for (const line of unmerged) {
      const [branch, time] = line.split(" ");
      const base = mainline.filter((c) => c.time < Number(time)).at(-1)!.oid;
      const wt = join(scratch, branch!.replace(/\//g, "_"));
      assert.is(git(repo, "worktree", "add", "-q", "--detach", wt, base).code, 0);
      const m = spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "merge", "--no-commit", "--no-ff", branch!], { cwd: wt, encoding: "utf8" });
      if (m.status !== 0 && /CONFLICT/.test(m.stdout + m.stderr)) conflicts++;
      git(repo, "worktree", "remove", "--force", wt);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return conflicts;
}

test("the report's figures match a recount from each run's git history and real merges", () => {
  for (const [side, repo] of Object.entries(result.repos!) as ["with" | "without", string][]) {
    const figures = result[side];
    const merged = new Set(git(repo, "log", "--format=%(trailers:key=Task,valueonly,separator=)", "main").out.split("\n").filter(Boolean));
    assert.is(figures.tasks_merged, merged.size, `${side}: tasks merged`);
    const twice = [...authorsPerTask(repo).values()].filter((a) => a.size > 1).length;
    assert.is(figures.tasks_done_twice, twice, `${side}: tasks done twice`);
    assert.is(figures.integration_conflicts, conflictsByMerging(repo), `${side}: conflicts by real merges`);
  }
  const contract = JSON.parse(git(result.repos!.with, "show", "refs/handoff/tasks/contract:task.json").out);
  assert.is(contract.handoffs.length, 1);
  const testsBy = git(result.repos!.with, "log", "--format=%an", "--grep=^claimed tests", "refs/handoff/tasks/tests").out;
  assert.ok(contract.handoffs[0].acked_by.length === 1 || testsBy === contract.handoffs[0].producer, "acked by the tests agent, or the producer took tests itself");
  assert.is(git(result.repos!.without, "for-each-ref", "refs/handoff/").out, "", "the run without it wrote no coordination state");
});

test("the report prints both columns side by side with the difference", () => {
  const text = reportText(result);
  assert.match(text, /^3 agents, 5 tasks, seed 1/);
  assert.match(text, /tasks done twice\s+\d+\s+0\s+-\d+/);
  assert.match(text, /merge conflicts at integration\s+\d+\s+0\s+-\d+/);
  assert.match(text, /git handoff stats of the run with it:/);
});

test("bad options: a clear line and exit 2", () => {
  // `npm run compare`'s script bundled (support/bundle.ts): a plain node start each, not tsx's ~0.6 CPU-s.
  const main = bundled(join(import.meta.dirname, "../src/demo/compare/main.ts"), { metaDirname: join(import.meta.dirname, "../src/demo") });
  for (const args of [["--agents", "1"], ["--tasks", "three"], ["--seed"], ["--bogus"]]) {
    const r = spawnSync(process.execPath, [main, ...args], { cwd: join(import.meta.dirname, ".."), encoding: "utf8" });
    assert.is(r.status, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, /^git-handoff compare: /);
  }
});

test.run();
