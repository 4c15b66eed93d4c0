// Task format 2 (src/store/task-format.ts): a task whose reclaim still binds its agent is written in
// a format builds that would drop `reclaimed` hold back as newer; every other task stays format 1.
// Whether an older build really holds it back is checked by hand (the commit adding this file).
import { createHash } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { TASK_MARKER_V2, TASK_MARKER_V2_SHA1, TASK_MARKER_V2_SHA256, taskMarkerV2Oid } from "../src/store/task-format.ts";
import { recordCommit, setRef, tree, commit } from "./support/forge.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { storeClaim, storeSync, storeTasks } from "./support/seed.ts";
import { cloneOf, serveRoot, twoClones } from "./support/servers.ts";

test.after(cleanupTemp);

const ok = (r: ReturnType<typeof cli>) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r;
};

const formatAt = (repo: string, rev: string) => gitOut(repo, "cat-file", "blob", `${rev}:format`);

test("the task format 2 marker's ids are the hashes of TASK_MARKER_V2", () => {
  const body = Buffer.from(TASK_MARKER_V2, "utf8");
  const raw = Buffer.concat([Buffer.from(`blob ${body.length}\0`), body]);
  assert.is(TASK_MARKER_V2, "git-handoff 2\n");
  assert.is(TASK_MARKER_V2_SHA1, createHash("sha1").update(raw).digest("hex"));
  assert.is(TASK_MARKER_V2_SHA256, createHash("sha256").update(raw).digest("hex"));
  assert.is(taskMarkerV2Oid(20), TASK_MARKER_V2_SHA1);
  assert.is(taskMarkerV2Oid(32), TASK_MARKER_V2_SHA256);
});

test("a task whose reclaim still binds is written in format 2 and read back; other tasks, and the same task after its next grant, in format 1", async () => {
  const repo = tempRepo();
  // The tasks and their claims: written in-process (support/seed.ts); the reclaim and what follows are processes.
  await storeTasks({ cwd: repo, agent: "lead" }, [
    { id: "parser", objective: "parser" },
    { id: "lexer", objective: "lexer" },
  ]);
  await storeClaim({ cwd: repo, agent: "alice" }, "parser");
  await storeClaim({ cwd: repo, agent: "bob" }, "lexer");
  assert.is(formatAt(repo, "refs/handoff/tasks/parser"), "git-handoff 1");
  ok(cli(["reclaim", "parser", "--reason", "alice stopped answering"], { cwd: repo, agent: "lead" }));
  assert.is(formatAt(repo, "refs/handoff/tasks/parser"), "git-handoff 2");
  assert.is(formatAt(repo, "refs/handoff/tasks/lexer"), "git-handoff 1");

  // Read back as this build's own: the field, no "unknown format" warning, doctor's format check ok.
  const show = ok(cli(["task", "show", "parser", "--json"], { cwd: repo, agent: "lead" }));
  assert.equal(show.json.reclaimed.agent, "alice");
  assert.not.match(show.stderr, /unknown format/);
  const refused = cli(["done", "parser", "--json"], { cwd: repo, agent: "alice" });
  assert.is(refused.code, 3, refused.stderr);
  assert.is(refused.json.error.code, "not_holder");
  // A write that leaves the reclaim binding keeps format 2.
  ok(cli(["depend", "parser", "--on", "lexer"], { cwd: repo, agent: "lead" }));
  assert.is(formatAt(repo, "refs/handoff/tasks/parser"), "git-handoff 2");
  const doctor = cli(["doctor", "--json"], { cwd: repo, agent: "lead" });
  const format = (doctor.json.checks as { name: string; status: string; detail: string }[]).find((c) => c.name === "format")!;
  assert.is(format.status, "ok", format.detail);

  // The next grant ends the rule: format 1 again, the history keeps its format 2 commits.
  ok(cli(["claim", "parser", "--force"], { cwd: repo, agent: "alice" }));
  assert.is(formatAt(repo, "refs/handoff/tasks/parser"), "git-handoff 1");
  assert.is(formatAt(repo, "refs/handoff/tasks/parser~1"), "git-handoff 2");
  ok(cli(["done", "parser"], { cwd: repo, agent: "alice" }));
  assert.is(formatAt(repo, "refs/handoff/tasks/parser"), "git-handoff 1");
});

test("a record in a format this build does not know is held back as from a newer git-handoff; task format 2 is received", async () => {
  const bare = serveRoot().bare("project");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const other = cloneOf(bare);
  const victim = cloneOf(bare);
  // A real task in format 2, from another clone of this build.
  await storeTasks({ cwd: other, agent: "lead" }, [{ id: "parser", objective: "parser" }]);
  await storeClaim({ cwd: other, agent: "alice" }, "parser");
  ok(cli(["reclaim", "parser", "--reason", "gone"], { cwd: other, agent: "lead" }));
  await storeSync({ cwd: other, agent: "lead" });
  assert.is(formatAt(bare, "refs/handoff/tasks/parser"), "git-handoff 2");
  // A task in format 3, and task format 2's marker on another family (memories are format 1).
  const at = new Date().toISOString();
  const record = { id: "future", objective: "f", status: "todo", priority: 0, scope: [], claim: null, attempts: 0, max_attempts: 3, fence: 0, created_by: "x", created_at: at, updated_at: at, result: null };
  setRef(bare, "refs/handoff/tasks/future", recordCommit(bare, "task.json", record, { format: "git-handoff 3\n", author: "x", event: { type: "created", task: "future", agent: "x", at } }));
  setRef(bare, "refs/handoff/memories/m1", commit(bare, { tree: tree(bare, { format: "git-handoff 2\n", "memory.json": "{}\n" }), author: "x", message: "m\n" }));

  const s = cli(["sync", "--json"], { cwd: victim, agent: "victim" });
  assert.is(s.code, 3, "a sync that keeps refs back says so by its status");
  const held = new Map<string, any>((s.json.quarantined ?? []).map((q: any) => [q.ref, q]));
  assert.is(held.get("refs/handoff/tasks/future")?.kind, "newer", JSON.stringify(s.json.quarantined));
  assert.match(held.get("refs/handoff/tasks/future").reason, /record format 3 \(this build reads up to 2\)/);
  assert.is(held.get("refs/handoff/memories/m1")?.kind, "newer");
  assert.match(held.get("refs/handoff/memories/m1").reason, /record format 2 \(this build reads 1\)/);
  assert.not.ok(held.has("refs/handoff/tasks/parser"), "format 2 tasks are this build's");
  assert.equal(ok(cli(["task", "show", "parser", "--json"], { cwd: victim, agent: "victim" })).json.reclaimed.agent, "alice");
});

test("the reclaimed agent may not finish the task until it claims again, after a round trip through a remote", async () => {
  const { a, b } = twoClones();
  await storeTasks({ cwd: a, agent: "lead" }, [{ id: "parser", objective: "parser" }]);
  await storeClaim({ cwd: a, agent: "alice" }, "parser");
  await storeSync({ cwd: a, agent: "alice" });
  await storeSync({ cwd: b, agent: "lead" });
  ok(cli(["reclaim", "parser", "--reason", "alice stopped answering"], { cwd: b, agent: "lead" }));
  await storeSync({ cwd: b, agent: "lead" });
  const s = ok(cli(["sync", "--json"], { cwd: a, agent: "alice" }));
  assert.equal(s.json.quarantined ?? [], [], JSON.stringify(s.json.quarantined));
  assert.is(formatAt(a, "refs/handoff/tasks/parser"), "git-handoff 2");

  const refused = cli(["done", "parser", "--json"], { cwd: a, agent: "alice" });
  assert.is(refused.code, 3, refused.stderr);
  assert.is(refused.json.error.code, "not_holder");
  assert.match(refused.json.error.message, /lead reclaimed it from alice \(fence 1\)/);

  ok(cli(["claim", "parser"], { cwd: a, agent: "alice" }));
  ok(cli(["done", "parser"], { cwd: a, agent: "alice" }));
  ok(cli(["sync"], { cwd: a, agent: "alice" }));
  ok(cli(["sync"], { cwd: b, agent: "lead" }));
  assert.is(ok(cli(["task", "show", "parser", "--json"], { cwd: b, agent: "lead" })).json.status, "done");
  assert.is(formatAt(b, "refs/handoff/tasks/parser"), "git-handoff 1");
});

test.run();
