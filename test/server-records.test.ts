// Task records a clone's long-running servers wrote, for each other (server-records.ts): a server
// lists another's grant from the line it appended, without reading the commit's objects; a line
// still being appended waits, a torn one is skipped, a file begun anew is read from its start, and
// a file of another format (another build's) is none.
import { createHash } from "node:crypto";
import * as z from "zod/mini";
import { appendFileSync, existsSync, mkdirSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Task } from "../src/core/task.ts";
import { claim } from "../src/store/task-actions.ts";
import { listTasks } from "../src/store/task-store.ts";
import { SERVER_RECORDS_FORMAT, ServerRecords, serverRecordsFile } from "../src/store/server-records.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { cleanEnv, cleanupTemp, gitOut, seedTasks, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const A = "a".repeat(40);
const B = "b".repeat(40);
const C = "c".repeat(40);

test("a server lists another server's grant from its line, not from the commit's objects", async () => {
  const repo = tempRepo();
  await seedTasks(repo, [{ id: "t-1" }, { id: "t-2" }]);
  const one = await openSyncedStore({ cwd: repo, agent: "one", warm: true, env: cleanEnv() });
  const two = await openSyncedStore({ cwd: repo, agent: "two", warm: true, env: cleanEnv() });
  try {
    assert.equal((await listTasks(two)).tasks.map((t) => t.status), ["todo", "todo"]);
    // A lone server leaves no line (it would help nobody); one that has met another writer does.
    await claim(one, "t-2", { overCapacity: true });
    assert.not.ok(existsSync(serverRecordsFile(`${repo}/.git`)));
    one.noteContended();
    await claim(one, "t-1", { overCapacity: true });
    // The grant's commit, tree and blob taken away: only its line can tell the second server.
    const commit = gitOut(repo, "rev-parse", "refs/handoff/tasks/t-1");
    const tree = gitOut(repo, "rev-parse", `${commit}^{tree}`);
    const blob = gitOut(repo, "rev-parse", `${commit}:task.json`);
    for (const oid of [commit, tree, blob]) unlinkSync(`${repo}/.git/objects/${oid.slice(0, 2)}/${oid.slice(2)}`);
    await new Promise((r) => setTimeout(r, 100)); // the ref's watch event
    const { tasks, problems } = await listTasks(two);
    assert.equal(problems, []);
    assert.equal(tasks.map((t) => [t.id, t.status, t.claim?.agent ?? null]), [["t-1", "claimed", "one"], ["t-2", "claimed", "one"]]);
  } finally {
    one.close();
    two.close();
  }
});

test("a line is read once whole, a torn one is skipped, and a file begun anew is read from its start", () => {
  const dir = tempDir();
  mkdirSync(`${dir}/handoff`);
  const path = serverRecordsFile(dir);
  const writer = new ServerRecords(path);
  const reader = new ServerRecords(path);
  writer.note(A, { id: "t-a" });
  assert.equal(reader.get(A), { id: "t-a" });
  // Half a line: not there yet, and there once its newline is.
  appendFileSync(path, `${B}\t{"id":`);
  assert.is(reader.get(B), undefined);
  appendFileSync(path, `"t-b"}\n`);
  assert.equal(reader.get(B), { id: "t-b" });
  // A torn line (a crash mid-write, then another append) costs only its own record.
  appendFileSync(path, `${C}\t{"id":"t-\n${"d".repeat(40)}\t{"id":"t-d"}\n`);
  assert.is(reader.get(C), undefined);
  assert.equal(reader.get("d".repeat(40)), { id: "t-d" });
  // Removed and written anew (a writer past the size bound): read from its start.
  rmSync(path);
  writeFileSync(path, `${"e".repeat(40)}\t{"id":"t-e"}\n`);
  assert.equal(reader.get("e".repeat(40)), { id: "t-e" });
});

test("a writer that finds the file past its bound begins it anew, and a reader follows", () => {
  const dir = tempDir();
  mkdirSync(`${dir}/handoff`);
  const path = serverRecordsFile(dir);
  const reader = new ServerRecords(path);
  writeFileSync(path, `${A}\t{"id":"t-a"}\n`.padEnd(5 << 20, " ") + "\n");
  assert.equal(reader.get(A), { id: "t-a" });
  new ServerRecords(path).note(B, { id: "t-b" });
  assert.ok(statSync(path).size < 100, "begun anew");
  assert.equal(reader.get(B), { id: "t-b" });
});

test("a file of another format is none to this build", () => {
  const dir = tempDir();
  mkdirSync(`${dir}/handoff`);
  new ServerRecords(serverRecordsFile(dir, SERVER_RECORDS_FORMAT + 1)).note(A, { id: "t-a", from: "a newer build" });
  new ServerRecords(serverRecordsFile(dir, SERVER_RECORDS_FORMAT - 1)).note(B, { id: "t-b", from: "an older build" });
  const reader = new ServerRecords(serverRecordsFile(dir));
  assert.is(reader.get(A), undefined);
  assert.is(reader.get(B), undefined);
});

// A line is taken without a schema check, so a build must never read lines written under another
// task schema: the format in the file's name changes with it. The task schema's fingerprint (its
// JSON Schema, hashed) for each format: a change of the schema fails here until the format is
// bumped and the new fingerprint added under it.
const SCHEMA_OF_FORMAT: Record<number, string> = { 1: "1e8e120dc3fc3c8d" };

test("the format in the file's name changes with the task record's schema", () => {
  const fingerprint = createHash("sha256").update(JSON.stringify(z.toJSONSchema(Task as never))).digest("hex").slice(0, 16);
  assert.is(SCHEMA_OF_FORMAT[SERVER_RECORDS_FORMAT], fingerprint, `the task schema is ${fingerprint}: bump SERVER_RECORDS_FORMAT (server-records.ts) and add it here`);
});

test.run();
