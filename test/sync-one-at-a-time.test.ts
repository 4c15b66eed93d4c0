// The agents of one clone share its refs: syncs that run at once take turns (one lock per clone
// and remote), so the first pushes what all of them had pending and the others push nothing;
// before, each pushed the same writes and made the others' leases lose.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, cleanEnv, cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";
import { cloneOf, serveRoot } from "./support/servers.ts";

test.after(cleanupTemp);

function syncTraced(cwd: string, trace: string): Promise<number> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, "sync"], { cwd, env: cleanEnv({ HANDOFF_AGENT: "lead", GIT_TRACE: trace }), stdio: "ignore" });
    p.on("close", (code) => resolve(code ?? 1));
  });
}

test("three syncs at once in one clone: one push carries every pending write, the others push nothing", async () => {
  const bare = serveRoot().bare("turns");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const clone = cloneOf(bare);
  for (const id of ["t1", "t2", "t3"]) assert.is(cli(["task", "add", `task ${id}`, "--id", id], { cwd: clone, agent: "lead" }).code, 0);
  const dir = tempDir();
  const traces = [0, 1, 2].map((i) => join(dir, `trace-${i}`));
  const codes = await Promise.all(traces.map((t) => syncTraced(clone, t)));
  assert.equal(codes, [0, 0, 0]);
  const pushes = traces.map((t) => readFileSync(t, "utf8").split("\n").filter((l) => l.includes("trace: built-in: git push ")).length);
  assert.is(pushes.reduce((a, b) => a + b, 0), 1, `pushes per sync: ${pushes.join(" ")}`);
  for (const id of ["t1", "t2", "t3"]) assert.is(gitOut(bare, "rev-parse", `refs/handoff/tasks/${id}`), gitOut(clone, "rev-parse", `refs/handoff/tasks/${id}`), id);
  assert.equal(gitOut(clone, "status", "--porcelain"), "");
});

test.run();
