// The agent waits for the hook to exit, so the writer of a deny or warn answer's catch record is
// started without node:child_process (src/hooks/spawn-detached.ts: libuv's process handle, what
// child_process wraps): loading it after the answer cost ~2.3 ms and a young-generation collection.
// Where Node offers no such handle, child_process starts the writer as before.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, cleanEnv, cleanupTemp, cli, tempDir, tempRepo } from "./support/repo.ts";
import { caughtEvents as caught, edit, pendingCatches as pending, until } from "./support/catch-writes.ts";

test.after(cleanupTemp);

/** The hook run with `probe` preloaded; returns its answer and the builtins it had loaded at exit. */
function hookWith(repo: string, file: string, probeBody: string, env: NodeJS.ProcessEnv = {}): { answer: string; loaded: string[] } {
  const dir = tempDir();
  const out = join(dir, "modules.txt");
  const probe = join(dir, "probe.cjs");
  writeFileSync(probe, `${probeBody}\nprocess.on("exit", () => require("fs").writeFileSync(${JSON.stringify(out)}, process.moduleLoadList.join("\\n")));\n`);
  const r = spawnSync(process.execPath, ["--require", probe, CLI, "hook", "claude-pre-tool-use"], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: "bob", ...env }), input: edit(repo, file), encoding: "utf8" });
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stderr, "");
  return { answer: r.stdout, loaded: readFileSync(out, "utf8").split("\n") };
}

test("a denied and a warned edit start their catch writer without loading child_process", async () => {
  const repo = tempRepo();
  assert.is(cli(["lease", "src/api/**", "--exclusive"], { cwd: repo, agent: "alice" }).code, 0);
  assert.is(cli(["lease", "src/shared.ts"], { cwd: repo, agent: "alice" }).code, 0);
  // bob's first hook in this repository may run git (and so load child_process): not this question.
  assert.is(cli(["hook", "claude-pre-tool-use"], { cwd: repo, agent: "bob", input: edit(repo, "src/free.ts") }).code, 0);
  const denied = hookWith(repo, "src/api/a.ts", "");
  assert.match(denied.answer, /"permissionDecision":"deny"/);
  assert.not.ok(denied.loaded.includes("NativeModule child_process"), "child_process is not loaded");
  await until("the detached writer records the denial", () => caught(repo) === 1 && pending(repo).length === 0);
  // With the test switch the hook waits for the writer through the same handle.
  const warned = hookWith(repo, "src/shared.ts", "", { HANDOFF_HOOK_CATCH_WAIT: "1" });
  assert.match(warned.answer, /warn: src\/shared\.ts is leased by alice/);
  assert.not.ok(warned.loaded.includes("NativeModule child_process"), "child_process is not loaded");
  assert.is(caught(repo), 2);
  assert.equal(pending(repo), []);
});

test("where Node offers no process handle, child_process starts the writer", async () => {
  const repo = tempRepo();
  assert.is(cli(["lease", "src/api/**", "--exclusive"], { cwd: repo, agent: "alice" }).code, 0);
  // Only this process's binding is taken away: the writer it starts runs as usual.
  // child_process.spawn is watched: the writer must be started by it, not replaced by the hook writing itself.
  const spawned = join(tempDir(), "spawned.txt");
  const noHandle = `const binding = process.binding; process.binding = function (name) { if (name === "process_wrap") throw new Error("No such module: process_wrap"); return binding.call(this, name); };
const cp = require("child_process"); const spawn = cp.spawn;
cp.spawn = function (file, args, ...rest) { require("fs").appendFileSync(${JSON.stringify(spawned)}, args.join(" ") + "\\n"); return spawn.call(this, file, args, ...rest); };`;
  const denied = hookWith(repo, "src/api/a.ts", noHandle);
  assert.match(denied.answer, /"permissionDecision":"deny"/);
  assert.match(readFileSync(spawned, "utf8"), /hook _record-catch /, "child_process started the writer");
  await until("the detached writer records the denial", () => caught(repo) === 1 && pending(repo).length === 0);
  const waited = hookWith(repo, "src/api/b.ts", noHandle, { HANDOFF_HOOK_CATCH_WAIT: "1" });
  assert.match(waited.answer, /"permissionDecision":"deny"/);
  assert.is(readFileSync(spawned, "utf8").match(/hook _record-catch /g)?.length, 2);
  assert.is(caught(repo), 2);
  assert.equal(pending(repo), []);
});

test.run();
