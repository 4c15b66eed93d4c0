// What a cold one-shot command loads: a `task show` served from the record cache spawns nothing
// and inflates nothing, so it loads neither child_process (with net and dgram), zlib, crypto, os
// (its temp and home folders come from the environment) nor the stream modules (output is written
// with write(2), process.stdout is never built). Output written that way is complete through a
// pipe, in order with what goes to the stream, and a reader that closes the pipe early still ends
// the command quietly.
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, cleanEnv, cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";
import { twoClones } from "./support/servers.ts";
import { storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

/** Runs the CLI with a preload that records the builtins loaded by exit; returns them. */
function loaded(repo: string, args: string[], input?: string): string[] {
  const dir = tempDir();
  const out = join(dir, "modules.txt");
  const probe = join(dir, "probe.cjs");
  writeFileSync(probe, `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(out)}, process.moduleLoadList.join("\\n")));\n`);
  const r = spawnSync(process.execPath, ["--require", probe, CLI, ...args], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: "a1" }), encoding: "utf8", ...(input !== undefined ? { input } : {}) });
  assert.is(r.status, 0, r.stderr);
  if (input !== undefined) assert.match(r.stdout, /"permissionDecision":"deny"/, "the hook denied the edit");
  return readFileSync(out, "utf8")
    .split("\n")
    .filter((m) => m.startsWith("NativeModule "))
    .map((m) => m.slice("NativeModule ".length));
}

test("a cold task show from the record cache loads no child_process, zlib, crypto or stream", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "look at me", "--id", "t1"], { cwd: repo, agent: "a1" }).code, 0);
  // The first show reads the record from git (inflate) and caches it; the second is served from the cache.
  assert.is(cli(["task", "show", "t1"], { cwd: repo, agent: "a1" }).code, 0);
  const mods = loaded(repo, ["task", "show", "t1"]);
  for (const m of ["child_process", "net", "zlib", "crypto", "stream", "os"]) assert.not.ok(mods.includes(m), `${m} is not loaded: ${mods.join(" ")}`);
  // The same command does print its answer.
  assert.match(cli(["task", "show", "t1"], { cwd: repo, agent: "a1" }).stdout, /look at me/);
});

test("a command that spawns git loads child_process when it does, and works", () => {
  const repo = tempRepo();
  // With reflogs for every ref, the new task ref is git's to write (loose-ref-writer.ts).
  gitOut(repo, "config", "core.logAllRefUpdates", "always");
  const mods = loaded(repo, ["task", "add", "claim me", "--id", "t1"]);
  assert.ok(mods.includes("child_process"), "the creation's ref transaction ran git");
  assert.match(cli(["task", "show", "t1"], { cwd: repo, agent: "a1" }).stdout, /claim me/);
});

test("a cold task add (a new ref, a fresh id, new objects) loads no child_process, zlib or crypto", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "first", "--id", "t0"], { cwd: repo, agent: "a1" }).code, 0);
  const mods = loaded(repo, ["task", "add", "a task with an id of its own"]);
  for (const m of ["child_process", "zlib", "crypto"]) assert.not.ok(mods.includes(m), `${m} is not loaded: ${mods.join(" ")}`);
  const listed = JSON.parse(cli(["task", "list", "--json"], { cwd: repo, agent: "a1" }).stdout) as { id: string; objective: string }[];
  assert.ok(listed.some((t) => t.objective === "a task with an id of its own" && /^t-[0-9a-z]{8}$/.test(t.id)), JSON.stringify(listed));
  gitOut(repo, "fsck", "--strict", "--no-dangling");
});

test("a cold claim, and the check after it, load no child_process, zlib or crypto", () => {
  const repo = tempRepo();
  for (const id of ["t1", "t2"]) assert.is(cli(["task", "add", `task ${id}`, "--id", id, "--scope", `src/${id}.ts`], { cwd: repo, agent: "a1" }).code, 0);
  assert.is(cli(["claim", "t1", "--agent", "a1"], { cwd: repo, agent: "a1" }).code, 0, "the lease ref is created");
  // The claim writes its objects (hashed and framed in-process), its refs in-process, and the
  // caches the next one-shot reader needs (the task record, the lease set).
  const claimed = loaded(repo, ["claim", "t2", "--agent", "a2"]);
  for (const m of ["child_process", "zlib", "crypto", "os"]) assert.not.ok(claimed.includes(m), `claim: ${m} is not loaded: ${claimed.join(" ")}`);
  const checked = loaded(repo, ["check", "src/t2.ts", "--agent", "a1"]);
  for (const m of ["child_process", "zlib", "crypto"]) assert.not.ok(checked.includes(m), `check: ${m} is not loaded: ${checked.join(" ")}`);
  assert.match(cli(["task", "show", "t2"], { cwd: repo, agent: "a1" }).stdout, /claimed[\s\S]*a2/);
  assert.match(cli(["check", "src/t2.ts", "--agent", "a1"], { cwd: repo, agent: "a1" }).stdout + cli(["check", "src/t2.ts", "--agent", "a1"], { cwd: repo, agent: "a1" }).stderr, /a2/);
  gitOut(repo, "fsck", "--strict", "--no-dangling");
});

test("a sync with nothing new through a path remote loads no tty, net, stream or child_process", () => {
  const { a } = twoClones();
  assert.is(cli(["task", "add", "share me", "--id", "t1"], { cwd: a, agent: "a1" }).code, 0);
  assert.is(cli(["sync"], { cwd: a, agent: "a1" }).code, 0, "the task is pushed");
  // The remote is read in-process (a bare repository by path): nothing to spawn, and the Ctrl-C
  // handling's terminal check (node:tty, which loads net and the streams) waits for a wait to ask it.
  const mods = loaded(a, ["sync"]);
  for (const m of ["tty", "net", "stream", "child_process"]) assert.not.ok(mods.includes(m), `${m} is not loaded: ${mods.join(" ")}`);
  assert.match(cli(["sync"], { cwd: a, agent: "a1" }).stdout, /0 updated here, 0 pushed/);
});

test("without WebAssembly (node --jitless) a cold claim hashes and frames its objects in JS, as git does", () => {
  const repo = tempRepo();
  for (const id of ["t1", "t2"]) assert.is(cli(["task", "add", `task ${id}`, "--id", id, "--scope", `src/${id}.ts`], { cwd: repo, agent: "a1" }).code, 0);
  const r = spawnSync(process.execPath, ["--jitless", CLI, "claim", "t2", "--agent", "a2"], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: "a2" }), encoding: "utf8" });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /claimed t2/);
  // fsck hashes every loose object again and inflates it (zlib checks the Adler-32 trailer).
  gitOut(repo, "fsck", "--strict", "--no-dangling", "--full");
  assert.match(cli(["task", "show", "t2"], { cwd: repo, agent: "a1" }).stdout, /claimed[\s\S]*a2/);
});

test("a denied edit through the full hook hands its catch record to the writer without loading crypto", () => {
  // The pending file's name came from node:crypto's randomBytes: the hook, on the agent's wait,
  // loaded crypto for four bytes. The writer it starts (child_process) is expected.
  const repo = tempRepo();
  assert.is(cli(["lease", "src/api/**", "--exclusive"], { cwd: repo, agent: "alice" }).code, 0);
  const edit = JSON.stringify({ cwd: repo, tool_name: "Edit", tool_input: { file_path: `${repo}/src/api/a.ts` } });
  const mods = loaded(repo, ["hook", "claude-pre-tool-use"], edit);
  assert.ok(mods.includes("child_process"), "the catch went to a detached writer");
  assert.not.ok(mods.includes("crypto"), `crypto is not loaded: ${mods.join(" ")}`);
});

test("long output through a pipe is complete, and a refusal's lines stay in order on stderr", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "a1" }, Array.from({ length: 40 }, (_, i) => ({ id: `t${i}`, objective: `task ${i} ${"x".repeat(2000)}` })));
  // Larger than a pipe's buffer (64 KiB): write(2) blocks until the reader drains it.
  const r = spawnSync(process.execPath, [CLI, "task", "list", "--json"], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: "a1" }), encoding: "utf8", maxBuffer: 1 << 24 });
  assert.is(r.status, 0, r.stderr);
  assert.ok(r.stdout.length > 80_000, `${r.stdout.length} bytes`);
  assert.is(JSON.parse(r.stdout).length, 40);
  const refused = cli(["task", "show", "nope"], { cwd: repo, agent: "a1" });
  assert.is.not(refused.code, 0);
  assert.match(refused.stderr, /^git-handoff: no task nope \[not_found\]\n {2}fix_input: /);
});

test("a reader that closes the pipe early ends a listing quietly", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "a1" }, Array.from({ length: 5 }, (_, i) => ({ id: `t${i}`, objective: `task ${i}` })));
  const child = spawn(process.execPath, [CLI, "task", "list"], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: "a1" }) });
  child.stdout.destroy();
  let err = "";
  child.stderr.on("data", (b) => (err += b));
  const code = await new Promise<number | null>((r) => child.on("close", r));
  assert.is(code, 0);
  assert.not.match(err, /EPIPE|Error/);
  const viaHead = spawnSync("sh", ["-c", `"${process.execPath}" "${CLI}" task list | head -1`], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: "a1" }), encoding: "utf8" });
  assert.is(viaHead.stderr, "");
  assert.match(viaHead.stdout, /^t0 /);
});

test("a cold task show, check or claim formats nothing through ICU (Intl, toLocaleString) as the bundle loads or as it runs", () => {
  // ICU's number formatting, started once by a message built at load (toLocaleString("en")), cost
  // every command ~7.5 MB and ~10% of its CPU: numbers in messages go through groupDigits instead.
  const repo = tempRepo();
  assert.is(cli(["task", "add", "look at me", "--id", "t1", "--scope", "src/**"], { cwd: repo, agent: "a1" }).code, 0);
  const dir = tempDir();
  const out = join(dir, "icu.txt");
  const probe = join(dir, "probe.cjs");
  writeFileSync(
    probe,
    [
      `const used = [];`,
      `for (const [o, k] of [[Number.prototype, "toLocaleString"], [Date.prototype, "toLocaleString"], [Date.prototype, "toLocaleDateString"], [Date.prototype, "toLocaleTimeString"], [String.prototype, "localeCompare"]]) {`,
      `  const f = o[k]; o[k] = function (...a) { used.push(k); return f.apply(this, a); };`,
      `}`,
      `for (const k of ["NumberFormat", "DateTimeFormat", "Collator", "PluralRules", "RelativeTimeFormat", "ListFormat", "Segmenter"]) {`,
      `  const C = Intl[k]; if (C) Intl[k] = new Proxy(C, { construct(t, a) { used.push("Intl." + k); return Reflect.construct(t, a); }, apply(t, self, a) { used.push("Intl." + k); return Reflect.apply(t, self, a); } });`,
      `}`,
      `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(out)}, used.join("\\n")));`,
    ].join("\n"),
  );
  for (const args of [["task", "show", "t1"], ["check", "src/a.ts"], ["claim", "t1"]]) {
    const r = spawnSync(process.execPath, ["--require", probe, CLI, ...args], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: "a2" }), encoding: "utf8" });
    assert.is(r.status, 0, r.stderr);
    assert.is(readFileSync(out, "utf8"), "", `${args.join(" ")} formatted through ICU`);
  }
});

test.run();
