// Long-running stores write their ref updates in process (loose-ref-writer.ts); one-shot commands
// write theirs through `git update-ref`. Racing each other for the same tasks they must grant every
// task once: two warm stores and CLI processes claiming the next task until none is left.
import { existsSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { addTask } from "../src/store/task-store.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { claimUntilNone } from "./support/claims.ts";
import { cleanEnv, cleanupTemp, cliAsync, gitOut, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

test("warm stores writing refs in process and CLI processes writing through git never grant a task twice", async () => {
  const repo = tempRepo();
  const N = 24;
  const lead = await openSyncedStore({ cwd: repo, agent: "lead", warm: true, env: cleanEnv() });
  try {
    for (let i = 0; i < N; i++) await addTask(lead, { id: `t-${i}`, objective: `task ${i}`, priority: 0, scope: [`area${i}/**`], maxAttempts: 3 });
  } finally {
    lead.close();
  }
  const granted: { id: string; agent: string }[] = [];
  const warm = await Promise.all(["warm-a", "warm-b"].map((agent) => openSyncedStore({ cwd: repo, agent, warm: true, env: cleanEnv() })));
  // Let each store read git's configuration, so its writes go in process.
  await new Promise((r) => setTimeout(r, 300));
  // A CLI process takes far longer to start than a warm claim: each warm claim waits for a CLI
  // attempt to end before the next, so both kinds keep racing until the tasks run out.
  let cliAttempts = 0;
  let clisDone = 0;
  try {
    const warmRacers = warm.map((store) =>
      claimUntilNone(store, granted, async () => {
        const seen = cliAttempts;
        while (cliAttempts === seen && clisDone < 2) await new Promise((r) => setTimeout(r, 5));
      }),
    );
    const cliRacers = ["cli-a", "cli-b"].map(async (agent) => {
      for (;;) {
        const r = await cliAsync(["claim", "--next", "--over-capacity", "--json"], { cwd: repo, agent });
        cliAttempts++;
        if (r.code !== 0) {
          clisDone++;
          assert.match(r.stdout + r.stderr, /no_task_ready|no task is ready/, `${agent}: ${r.stderr}`);
          return;
        }
        granted.push({ id: (r.json as { task?: { id: string }; id?: string }).task?.id ?? (r.json as { id: string }).id, agent });
      }
    });
    await Promise.all([...warmRacers, ...cliRacers]);
    assert.ok(existsSync(`${repo}/.git/handoff/ref-temps`), "the warm stores wrote their refs in process");
  } finally {
    for (const s of warm) s.close();
  }
  const ids = granted.map((g) => g.id).sort();
  assert.is(new Set(ids).size, ids.length, `no task granted twice: ${ids.join(" ")}`);
  assert.is(ids.length, N, "every task granted");
  assert.ok(granted.some((g) => g.agent.startsWith("warm")) && granted.some((g) => g.agent.startsWith("cli")), "both kinds of writer won some");
  for (const g of granted) {
    const record = JSON.parse(gitOut(repo, "show", `refs/handoff/tasks/${g.id}:task.json`)) as { claim: { agent: string } | null };
    assert.is(record.claim?.agent, g.agent, `${g.id} is held by the writer it was granted to`);
  }
  gitOut(repo, "fsck", "--strict", "--no-dangling");
  assert.not.match(gitOut(repo, "for-each-ref", "--format=%(refname)"), /\.lock/);
});

test.run();
