// Many real processes racing through the same 50 tasks, each claiming through the store (the
// CLI's own path, without a CLI process per claim): compare-and-swap must grant each task once.
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanEnv, cleanupTemp, gitOut, seedTasks, tempRepo } from "./support/repo.ts";
import { bundled } from "./support/bundle.ts";
import { RACERS } from "./support/claim-race.ts";

test.after(cleanupTemp);

const RACER = resolve(import.meta.dirname, "support/racer.ts");

/** One process claiming each task in turn through the store (the CLI's own path), one JSON line per attempt. */
function racer(repo: string, agent: string, ids: string[]): Promise<{ id: string; ok: boolean; holder: string | null; code?: string }[]> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [bundled(RACER), repo, agent, ...ids], { env: cleanEnv(), cwd: resolve(import.meta.dirname, "..") });
    let out = "";
    let err = "";
    child.stdout.on("data", (b) => (out += b));
    child.stderr.on("data", (b) => (err += b));
    child.on("close", (code) => (code === 0 ? res(out.trim().split("\n").map((l) => JSON.parse(l))) : rej(new Error(`racer ${agent} exited ${code}: ${err}`))));
  });
}

test(`${RACERS} processes race through 50 tasks in the same order: exactly one grant per task`, async () => {
  const repo = tempRepo();
  const ids = Array.from({ length: 50 }, (_, i) => `bulk-${i}`);
  await seedTasks(repo, ids.map((id) => ({ id })));
  const all = await Promise.all(Array.from({ length: RACERS }, (_, i) => racer(repo, `racer-${i}`, ids)));
  for (const id of ids) {
    const attempts = all.map((r, i) => ({ agent: `racer-${i}`, ...r.find((a) => a.id === id)! }));
    const winners = attempts.filter((a) => a.ok);
    assert.is(winners.length, 1, `${id}: ${winners.map((w) => w.agent).join(", ")}`);
    for (const loser of attempts.filter((a) => !a.ok)) {
      assert.is(loser.code, "held_by_other", `${id} ${loser.agent}`);
      assert.is(loser.holder, winners[0]!.agent);
    }
    const claims = gitOut(repo, "log", "--format=%s", `refs/handoff/tasks/${id}`).split("\n").filter((l) => l.startsWith("claimed "));
    assert.is(claims.length, 1, `${id}: one claimed commit`);
  }
});

test.run();
