// Files under .git/handoff/ that hold records (or fields of them) as one build's schema decoded
// them, taken without the schema's check: a build never reads another record schema's file (an
// upgrade; an older CLI or MCP server beside a newer one on one clone). Each file's format (in its
// name, or its version) is pinned here to a fingerprint of the schemas it decodes, so a schema
// change fails until the format is bumped; a file of another format is none to this build (read
// from git, never as corrupt data), and the renamed files of earlier formats are removed.
import { createHash } from "node:crypto";
import * as z from "zod/mini";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { AgentRecord } from "../src/core/agent.ts";
import { ConfigFile } from "../src/core/config.ts";
import { HandoffEvent } from "../src/core/event.ts";
import { Lease, type LeaseSet } from "../src/core/lease.ts";
import { LoopRecord } from "../src/core/loop-record.ts";
import { Memory } from "../src/core/memory.ts";
import { Task } from "../src/core/task.ts";
import { FAST_CACHE_VERSION } from "../src/hooks/fast-cache.ts";
import { POLICY_CACHE_VERSION } from "../src/store/repo-policy.ts";
import { COMPACT_CACHE_VERSION, compactIfDue } from "../src/store/archive.ts";
import { CLAIMED_INDEX_HEADER } from "../src/store/claimed-index-file.ts";
import { PACKED_HEADER } from "../src/store/claimed-index.ts";
import { EVENT_INDEX_VERSION } from "../src/store/event-index-files.ts";
import { LEASE_CACHE_FORMAT, leaseCacheFile, saveLeaseCache } from "../src/store/lease-cache-file.ts";
import { LOG_INDEX_VERSION } from "../src/store/log-index.ts";
import { TASKS_CACHE_FORMAT, tasksCacheFile } from "../src/store/record-cache.ts";
import { RECORDS_FILE_VERSION } from "../src/store/record-cache-file.ts";
import { LISTING_VERSION, VIEW_VERSION } from "../src/store/record-cache-listing.ts";
import { ORDER_FILE_VERSION } from "../src/store/task-order-file.ts";
import { SERVER_RECORDS_FORMAT } from "../src/store/server-records.ts";
import { DECLARED_FORMAT, declaredFiles } from "../src/store/declared-files.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { cleanEnv, cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { storeSession } from "./support/seed.ts";

test.after(cleanupTemp);

/** The schemas' JSON Schemas, hashed: what a line decoded by them may hold and mean (one alone as server-records.test.ts hashes it). */
function fingerprint(schemas: unknown[]): string {
  const json = schemas.map((s) => z.toJSONSchema(s as never));
  return createHash("sha256")
    .update(JSON.stringify(json.length === 1 ? json[0] : json))
    .digest("hex")
    .slice(0, 16);
}

const TASK = "1e8e120dc3fc3c8d";
const LEASE = "31d7c62e416be693";
const EVENT = "907e0f8c0c41acd3";
const VIEW_RECORDS = "56649c8fd15b6fbc";

/**
 * Each file: its format now, the schemas whose records (or fields) it holds, and the fingerprint
 * of those schemas for each format. A schema change fails here: bump the file's format and add
 * the new fingerprint under it (the earlier ones stay, a record of which build wrote what).
 */
const FILES: { file: string; format: number | string; schemas: unknown[]; pinned: Record<string, string> }[] = [
  { file: "tasks-<F>.cache (record-cache.ts)", format: TASKS_CACHE_FORMAT, schemas: [Task], pinned: { 1: TASK } },
  { file: "server-records-<F> (server-records.ts)", format: SERVER_RECORDS_FORMAT, schemas: [Task], pinned: { 1: TASK } },
  { file: "listing-<digest>.json (record-cache-listing.ts)", format: LISTING_VERSION, schemas: [Task], pinned: { 4: TASK } },
  { file: "view-listing.json (record-cache-listing.ts)", format: VIEW_VERSION, schemas: [Task], pinned: { 6: TASK } },
  { file: "task-order.json (task-order-file.ts)", format: ORDER_FILE_VERSION, schemas: [Task], pinned: { 1: TASK } },
  { file: "claimed.index (claimed-index-file.ts)", format: CLAIMED_INDEX_HEADER, schemas: [Task], pinned: { "handoff-claimed-index 3": TASK } },
  { file: "claimed.packed (claimed-index.ts)", format: PACKED_HEADER, schemas: [Task], pinned: { "handoff-claimed-packed 2": TASK } },
  { file: "records.json, caller-records.json (record-cache-file.ts)", format: RECORDS_FILE_VERSION, schemas: [Memory, LoopRecord], pinned: { 1: VIEW_RECORDS } },
  { file: "leases-<F>.cache (lease-cache-file.ts)", format: LEASE_CACHE_FORMAT, schemas: [Lease], pinned: { 1: LEASE } },
  { file: "events/ (event-index-files.ts)", format: EVENT_INDEX_VERSION, schemas: [HandoffEvent], pinned: { 15: EVENT } },
  { file: "log-index.json (log-index.ts)", format: LOG_INDEX_VERSION, schemas: [HandoffEvent], pinned: { 1: EVENT } },
  { file: "compact.json (archive.ts)", format: COMPACT_CACHE_VERSION, schemas: [Task], pinned: { 1: TASK } },
  { file: "declared/<agent> (declared-files.ts)", format: DECLARED_FORMAT, schemas: [AgentRecord], pinned: { 1: "c45927586cebbf61" } },
  { file: "policy.cache (repo-policy.ts)", format: POLICY_CACHE_VERSION, schemas: [ConfigFile], pinned: { 2: "00da5c4810d36e62" } },
  // Compiled from the lease set, the caller's agent record and the policy; git-hooks/fast-hook.sh names the version too.
  { file: "fast-hook/<key> (fast-cache.ts)", format: FAST_CACHE_VERSION, schemas: [Lease, AgentRecord, ConfigFile], pinned: { "git-handoff fast-hook 4": "768c285cf4fee8f1" } },
];

test("each cache's format changes with the schemas of the records it holds", () => {
  const stale = FILES.map(({ file, format, schemas, pinned }) => ({ file, format, now: fingerprint(schemas), was: pinned[String(format)] })).filter((f) => f.now !== f.was);
  assert.equal(stale, [], `the schemas changed: bump each file's format and pin ${stale.map((f) => `${f.file}: ${f.now}`).join(", ")}`);
});

test("the shell hook reads the fast-hook cache's version that fast-cache.ts writes", () => {
  // Named twice (the shell hook starts no Node): a bump in one only would send every edit to the
  // full hook ("no cache") without a word.
  const shell = readFileSync(new URL("../git-hooks/fast-hook.sh", import.meta.url), "utf8");
  const named = [...shell.matchAll(/"(git-handoff fast-hook \d+)"/g)].map((m) => m[1]);
  assert.ok(named.length > 0, "git-hooks/fast-hook.sh names no fast-hook cache version");
  assert.equal([...new Set(named)], [FAST_CACHE_VERSION]);
});

test("a tasks cache of another format is none to this build; an earlier one is removed when this build begins its own", () => {
  const repo = tempRepo();
  const git = `${repo}/.git`;
  assert.is(cli(["task", "add", "cached", "--id", "t1"], { cwd: repo, agent: "a1" }).code, 0);
  const tip = gitOut(repo, "rev-parse", "refs/handoff/tasks/t1");
  const record = JSON.parse(gitOut(repo, "show", `${tip}:task.json`)) as { status: string; objective: string };
  assert.is(record.status, "todo");
  // Another build's line for the same commit, as its schema read it: this build must not take it.
  const foreign = `${tip}\t${JSON.stringify({ ...record, status: "done", objective: "another build's" })}\n`;
  const others = [`${git}/handoff/tasks.cache`, tasksCacheFile(git, TASKS_CACHE_FORMAT - 1), tasksCacheFile(git, TASKS_CACHE_FORMAT + 1)];
  for (const f of others) writeFileSync(f, foreign);
  rmSync(tasksCacheFile(git), { force: true });
  const shown = cli(["task", "show", "t1", "--json"], { cwd: repo, agent: "a1" });
  assert.is(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /"status": ?"todo"/);
  assert.match(shown.stdout, /"objective": ?"cached"/);
  // Begun anew from git; the files of earlier formats gone (nothing reads them), a later one kept.
  assert.ok(readFileSync(tasksCacheFile(git), "utf8").includes(`${tip}\t`), "this build's file begun again");
  assert.equal(
    others.map((f) => existsSync(f)),
    [false, false, true],
  );
});

test("a lease cache of another format is none to this build; a save removes an earlier one", () => {
  const repo = tempRepo();
  const git = `${repo}/.git`;
  assert.is(cli(["lease", "a/x.ts"], { cwd: repo, agent: "alice" }).code, 0);
  const tip = gitOut(repo, "rev-parse", "refs/handoff/leases");
  const stored = Number(/\d+$/.exec(gitOut(repo, "show", `${tip}:format`))![0]);
  const { leases } = JSON.parse(gitOut(repo, "show", `${tip}:leases.json`)) as LeaseSet;
  assert.ok(leases.some((l) => l.agent === "alice"));
  // Another build's cache of the same tip, its lease read as another agent's.
  const others = [`${git}/handoff/leases.cache`, leaseCacheFile(git, LEASE_CACHE_FORMAT + 1)];
  for (const f of others) saveLeaseCache(f, tip, { leases: leases.map((l) => ({ ...l, agent: "mallory" })) }, stored);
  rmSync(leaseCacheFile(git), { force: true });
  const checked = cli(["check", "a/x.ts", "--json"], { cwd: repo, agent: "dave" });
  assert.is(checked.code, 0, checked.stderr);
  assert.match(checked.stdout, /"alice"/);
  assert.not.match(checked.stdout, /mallory/);
  assert.ok(existsSync(leaseCacheFile(git)), "this build's file saved again");
  assert.equal(
    others.map((f) => existsSync(f)),
    [false, true],
  );
});

test("an agent's declared files written by another format are a miss, read from the record and written anew", async () => {
  const repo = tempRepo();
  await storeSession({ cwd: repo, agent: "alice" }, "the api", { files: ["src/api/**"] });
  const tip = gitOut(repo, "rev-parse", "refs/handoff/agents/alice");
  const file = `${repo}/.git/handoff/declared/alice`;
  mkdirSync(dirname(file), { recursive: true });
  // The file of a build before formats (the JSON on the second line), its fields read another way.
  writeFileSync(file, `${tip}\n${JSON.stringify({ files: ["docs/**"], started_at: null })}`);
  const store = await openSyncedStore({ cwd: repo, agent: "alice", env: cleanEnv() });
  try {
    assert.equal((await declaredFiles(store, "alice")).declared.files, ["src/api/**"]);
  } finally {
    store.close();
  }
  assert.ok(readFileSync(file, "utf8").startsWith(`${tip}\ndeclared ${DECLARED_FORMAT}\n`), "written anew in this build's format");
});

test("a finish cache without this build's format is rebuilt from the task records", async () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "open", "--id", "t1"], { cwd: repo, agent: "a1" }).code, 0);
  const ref = "refs/handoff/tasks/t1";
  const tip = gitOut(repo, "rev-parse", ref);
  const file = `${repo}/.git/handoff/compact.json`;
  const store = await openSyncedStore({ cwd: repo, agent: "a1", env: cleanEnv() });
  const retention = store.config.retentionMs;
  try {
    // Another build's file (none before formats had one): it says the open task finished long ago.
    writeFileSync(file, JSON.stringify({ retention, tips: { [ref]: tip }, finished: { [ref]: 1 } }));
    await compactIfDue(store);
  } finally {
    store.close();
  }
  assert.equal(JSON.parse(readFileSync(file, "utf8")), { v: COMPACT_CACHE_VERSION, retention, tips: { [ref]: tip }, finished: {} });
});

test.run();
