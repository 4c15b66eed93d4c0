// No value from a record, the remote, a hook payload or the user reaches git as an option: every
// call site fed with `--output=<file>` refuses cleanly and leaves the file as it was.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { resolveCommit } from "../src/git/commits.ts";
import { commitMessages, hasCommit, newCommits, pathsOfCommits } from "../src/git/changed-paths.ts";
import { diffSummary, mergeBase } from "../src/git/diff.ts";
import { previewMerge } from "../src/git/merge-tree.ts";
import { configSetLocal } from "../src/git/config.ts";
import { Task } from "../src/core/task.ts";
import { amendRecord } from "./support/forge.ts";
import { cleanupTemp, cli, gitOut, handoffRefs, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

/** A file an injected `--output=` would truncate, with content to compare afterwards. */
function victimFile(): { path: string; unchanged(): boolean } {
  const path = join(tempDir(), "precious.txt");
  writeFileSync(path, "keep me\n");
  return { path, unchanged: () => readFileSync(path, "utf8") === "keep me\n" };
}

async function rejects(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch {
    return;
  }
  assert.unreachable("expected a refusal");
}

test("git call sites refuse option-shaped values and leave the file alone", async () => {
  const repo = tempRepo();
  const head = gitOut(repo, "rev-parse", "HEAD");
  const f = victimFile();
  const evil = `--output=${f.path}`;
  await rejects(diffSummary(repo, evil, head));
  await rejects(diffSummary(repo, head, evil));
  assert.is(await mergeBase(repo, evil, head), null);
  assert.is(await mergeBase(repo, "main", evil), null);
  const merge = await previewMerge(repo, evil, head);
  assert.is(merge.ok, false);
  assert.is(await hasCommit(repo, evil), false);
  await rejects(newCommits(repo, evil, { remote: undefined }));
  await rejects(newCommits(repo, head, { commit: evil }));
  await rejects(pathsOfCommits(repo, [evil]));
  await rejects(commitMessages(repo, [evil]));
  await rejects(resolveCommit(repo, evil));
  assert.ok(f.unchanged(), "no call wrote the file");
  // A config value that looks like an option is stored as a value.
  await configSetLocal(repo, "handoff.version", "--output=x");
  assert.is(gitOut(repo, "config", "--get", "handoff.version"), "--output=x");
  // Real ids still work.
  assert.is((await diffSummary(repo, head, head)).files, 0);
  assert.is(await mergeBase(repo, "main", head), head);
});

test("schema: commit-naming fields hold full hex object ids only", () => {
  const base = {
    id: "t", objective: "o", status: "todo", priority: 0, scope: [], claim: null, attempts: 0, max_attempts: 3, fence: 0,
    created_by: "a", created_at: "2026-01-01T00:00:00.000Z", updated_at: "2026-01-01T00:00:00.000Z", result: null,
  };
  assert.ok(Task.safeParse({ ...base, base: "a".repeat(40) }).success);
  assert.ok(Task.safeParse({ ...base, base: "b".repeat(64) }).success);
  for (const bad of ["--output=/tmp/x", "HEAD", "abc123", "A".repeat(40), "a".repeat(41)]) {
    assert.not.ok(Task.safeParse({ ...base, base: bad }).success, `base ${bad}`);
    assert.not.ok(Task.safeParse({ ...base, result: { commit: bad } }).success, `result.commit ${bad}`);
  }
});

test("a task record whose base is an option: handoff and done --verify refuse, the file is untouched, no ref moves", () => {
  const repo = tempRepo();
  const f = victimFile();
  assert.is(cli(["task", "add", "work", "--id", "w"], { cwd: repo, agent: "lead" }).code, 0);
  assert.is(cli(["claim", "w"], { cwd: repo, agent: "alice" }).code, 0);
  amendRecord(repo, "refs/handoff/tasks/w", (t) => (t.base = `--output=${f.path}`), { author: "alice" });
  const before = handoffRefs(repo);
  for (const args of [["handoff", "w", "--note", "n"], ["done", "w", "--verify", "true"], ["done", "w"]]) {
    const r = cli([...args, "--json"], { cwd: repo, agent: "alice" });
    assert.is.not(r.code, 0, `${args.join(" ")} refused`);
    assert.is(r.json?.error?.code, "corrupt_state", r.stdout + r.stderr);
    assert.match(r.json.error.message, /base/);
  }
  assert.ok(f.unchanged(), "the file an injected --output names is byte-identical");
  assert.is(handoffRefs(repo), before);
  assert.not.ok(existsSync(join(repo, "--output=")));
});

test.run();
