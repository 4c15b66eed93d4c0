// Nothing under .git/handoff/ is written, appended to, removed or read through a symbolic link
// (git/safe-file.ts): with a link planted at every cache file, and then at every folder, that
// commands wrote, each pointing at a decoy in the test's own temp folder, a representative set of
// commands (writes, reads, doctor, a hook, a sync through a remote on this disk) leaves every decoy
// byte for byte as it was, makes or removes no file outside .git, and answers as it did before.
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readEvents } from "../src/store/events.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { cleanupTemp, cli, gitOut, tempDir, type CliResult } from "./support/repo.ts";
import { TASKS_CACHE_FORMAT } from "../src/store/record-cache.ts";

const TASKS_CACHE = `tasks-${TASKS_CACHE_FORMAT}.cache`;

test.after(cleanupTemp);

function run(repo: string, agent: string, args: string[], input?: string): CliResult {
  const r = cli(args, { cwd: repo, agent, ...(input !== undefined ? { input } : {}) });
  assert.is(r.code, 0, `${agent}: ${args.join(" ")}: ${r.stderr}`);
  return r;
}

/** Every file and folder under `dir` (links not followed), relative to it, folders first. */
function walk(dir: string, skip: (rel: string) => boolean = () => false): { files: string[]; folders: string[] } {
  const files: string[] = [];
  const folders: string[] = [];
  const visit = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      const rel = relative(dir, path);
      if (skip(rel)) continue;
      if (lstatSync(path).isDirectory()) {
        folders.push(rel);
        visit(path);
      } else files.push(rel);
    }
  };
  visit(dir);
  return { files, folders };
}

/** What a tree holds: each folder, and each file with its bytes, so any change shows. */
function snapshot(dir: string, skip?: (rel: string) => boolean): Record<string, string> {
  const out: Record<string, string> = {};
  const { files, folders } = walk(dir, skip);
  for (const f of folders) out[`${f}/`] = "";
  for (const f of files) out[f] = readFileSync(join(dir, f), "latin1");
  return out;
}

/** Every command of the round, each answer checked; `n` keeps task ids apart between rounds. */
function commands(repo: string, n: number): void {
  const [a, b] = [`r${n}a`, `r${n}b`];
  run(repo, "lead", ["task", "add", "first", "--id", a, "--scope", `src/${n}/**`]);
  run(repo, "lead", ["task", "add", "second", "--id", b]);
  run(repo, "lead", ["depend", b, "--on", a]);
  assert.ok(run(repo, "alice", ["ready", "--json"]).json.some((t: { id: string }) => t.id === a), "ready lists the first task");
  run(repo, "alice", ["claim", a]);
  run(repo, "alice", ["renew", a]);
  run(repo, "alice", ["lease", `docs/${n}.md`, "--exclusive"]);
  const edit = JSON.stringify({ cwd: repo, hook_event_name: "PreToolUse", tool_name: "Edit", tool_input: { file_path: `${repo}/docs/${n}.md`, old_string: "a", new_string: "b" } });
  const denied = cli(["hook", "claude-pre-tool-use"], { cwd: repo, agent: "bob", input: edit });
  assert.is(denied.json?.hookSpecificOutput?.permissionDecision, "deny", `the hook still sees alice's lease: ${denied.stdout} ${denied.stderr}`);
  run(repo, "alice", ["done", a]);
  run(repo, "bob", ["claim", b]);
  run(repo, "bob", ["release", b]);
  assert.is(run(repo, "bob", ["task", "show", b, "--json"]).json.status, "todo");
  assert.ok(run(repo, "bob", ["status", "--json"]).json, "status answers");
  assert.is(run(repo, "bob", ["task", "list", "--limit", "2", "--json"]).json.length, 2);
  run(repo, "bob", ["doctor"]);
  run(repo, "bob", ["sync"]);
  assert.is(gitOut(repo, "rev-parse", `refs/handoff/tasks/${a}`), gitOut(`${repo}/../remote.git`, "rev-parse", `refs/handoff/tasks/${a}`), "the sync pushed");
}

/** The answers of the read commands, against a walk of the history in process (no cache). */
async function checkAnswers(repo: string, claims: number): Promise<void> {
  const store = await openSyncedStore({ cwd: repo, agent: "oracle" });
  try {
    const all = await readEvents(store, {}, { onProblem: () => {} });
    assert.equal(run(repo, "bob", ["events", "--json"]).json, all);
    assert.equal(run(repo, "bob", ["events", "--agent", "alice", "--json"]).json, await readEvents(store, { agent: "alice" }, { onProblem: () => {} }));
    assert.equal(run(repo, "bob", ["events", "--type", "claimed", "--json"]).json, await readEvents(store, { type: "claimed" }, { onProblem: () => {} }));
  } finally {
    store.close();
  }
  assert.is(run(repo, "bob", ["stats", "--json"]).json.claims.granted, claims);
}

test("links planted at the caches and their folders are never followed, and commands answer as before", async () => {
  const base = tempDir("handoff-links-");
  const repo = join(base, "repo");
  mkdirSync(repo);
  gitOut(repo, "init", "-q", "-b", "main");
  gitOut(repo, "commit", "-q", "--allow-empty", "-m", "initial");
  gitOut(base, "init", "-q", "--bare", "remote.git");
  gitOut(repo, "remote", "add", "origin", join(base, "remote.git"));
  gitOut(repo, "push", "-q", "origin", "main");
  const decoys = join(base, "decoys");
  mkdirSync(decoys);

  commands(repo, 1);
  await checkAnswers(repo, 2);
  const state = join(repo, ".git/handoff");
  const made = walk(state);
  for (const f of ["claimed.index", TASKS_CACHE, "policy.cache", "events/all.jsonl", "events/stats.jsonl", "events/manifest.json"]) assert.ok(made.files.includes(f), `${f} was written`);
  for (const d of ["events", "fast-hook"]) assert.ok(made.folders.includes(d), `${d}/ was made`);

  // Outside .git: the worktree and the decoys, each file's bytes.
  const outside = () => ({ repo: snapshot(repo, (rel) => rel === ".git"), decoys: snapshot(decoys) });

  // Every file a link to a decoy file of its own.
  made.files.forEach((f, i) => {
    const decoy = join(decoys, `file-${i}`);
    writeFileSync(decoy, `decoy ${i}: ${f}\n`);
    rmSync(join(state, f));
    symlinkSync(decoy, join(state, f));
  });
  const before = outside();
  commands(repo, 2);
  await checkAnswers(repo, 4);
  assert.equal(outside(), before, "no decoy file written, no file made or removed outside .git");
  // The event index, built again, wrote its key files under a generation of their own (the manifest's).
  const gen: number = JSON.parse(readFileSync(join(state, "events/manifest.json"), "utf8")).gen;
  for (const f of ["claimed.index", TASKS_CACHE, gen ? `events/all.${gen}.jsonl` : "events/all.jsonl", "events/manifest.json"]) assert.ok(lstatSync(join(state, f)).isFile(), `${f}: the link gave way to a file of our own`);

  // Every folder a link to a decoy folder holding files of the names commands write and remove
  // there, and two more (a user's .jsonl, a name like a dead process's temp or registration);
  // also the folders these commands may not have made yet (deferred pushes, long-running
  // processes' ref temps and turns, verification runs, shared polls, declared files).
  const more = ["pending-origin", "ref-temps", "turns", "verification-runs", "poll-origin", "declared"];
  const folders = [...new Set([...walk(state).folders.filter((d) => !d.includes("/")), ...more])];
  folders.forEach((d, i) => {
    const decoy = join(decoys, `folder-${i}`);
    mkdirSync(decoy);
    const names = more.includes(d) ? [] : readdirSync(join(state, d)).filter((x) => !lstatSync(join(state, d, x)).isDirectory());
    for (const name of [...names, "mydata.jsonl", "999999-x.json"]) writeFileSync(join(decoy, name), `decoy of ${d}/${name}\n`);
    rmSync(join(state, d), { recursive: true, force: true });
    symlinkSync(decoy, join(state, d));
  });
  const beforeFolders = outside();
  commands(repo, 3);
  await checkAnswers(repo, 6);
  assert.equal(outside(), beforeFolders, "no decoy folder written to or emptied, no file made or removed outside .git");
  for (const d of ["events", "fast-hook"]) assert.ok(lstatSync(join(state, d)).isDirectory(), `${d}: the link gave way to a folder of our own`);
});

test.run();
