// Benchmark: validation on receive (src/sync/validate-receive.ts).
//   npm run build && node --import tsx test/bench/receive.bench.ts [updates]
// A writer clone makes 1,000 tasks, then one claim on each (1,000 task updates), pushed with plain
// git. The receiving clone syncs both. Reported: the validation time per received commit, measured
// in-process on the same refs (the budget is 2 ms), its share of the whole `git handoff sync`, and a
// sync with nothing new with and without anything quarantined.
import { spawnSync } from "node:child_process";
import { performance } from "node:perf_hooks";
import { claim } from "../../src/store/task-actions.ts";
import { addTask } from "../../src/store/task-store.ts";
import { openSyncedStore } from "../../src/sync/open.ts";
import { trackingTips } from "../../src/sync/tracking.ts";
import { validateReceived } from "../../src/sync/validate-receive.ts";
import { CLI, cleanEnv, cleanupTemp, gitOut, tempRepo } from "../support/repo.ts";
import { cloneOf, serveRoot } from "../support/servers.ts";

const UPDATES = Number(process.argv[2] ?? 1000);

function timed(args: string[], cwd: string): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, env: cleanEnv({ HANDOFF_AGENT: "receiver" }), encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${args.join(" ")}: ${r.stderr}`);
  return performance.now() - t0;
}

async function validateAll(cwd: string, before: Map<string, string>): Promise<{ ms: number; commits: number }> {
  const store = await openSyncedStore({ cwd, agent: "receiver" });
  const after = await trackingTips(store, "origin");
  const changed = [...after].filter(([ref, tip]) => before.get(ref) !== tip);
  let commits = 0;
  for (const [ref, tip] of changed) {
    const anchor = before.get(ref);
    commits += anchor === undefined ? 1 : Number(gitOut(cwd, "rev-list", "--count", `${anchor}..${tip}`));
  }
  const t0 = performance.now();
  for (const [ref, tip] of changed) {
    const v = await validateReceived(store, ref, tip, before.get(ref) ?? null, store.now());
    if (!v.ok) throw new Error(`${ref}: ${v.reason}`);
  }
  const ms = performance.now() - t0;
  store.close();
  return { ms, commits };
}

try {
  const bare = serveRoot().bare("bench");
  const writer = tempRepo();
  gitOut(writer, "push", "-q", bare, "main");
  const receiver = cloneOf(bare);
  const w = await openSyncedStore({ cwd: writer, agent: "writer", warm: true });
  for (let i = 0; i < UPDATES; i++) await addTask(w, { id: `t-${i}`, objective: `task ${i}`, priority: 0, scope: [], maxAttempts: 3 });
  gitOut(writer, "push", "-q", "--force", bare, "refs/handoff/*:refs/handoff/*");
  const first = timed(["sync"], receiver);
  const s0 = await openSyncedStore({ cwd: receiver, agent: "receiver" });
  const anchors = await trackingTips(s0, "origin");
  s0.close();
  const tipOnly = await (async () => {
    const store = await openSyncedStore({ cwd: receiver, agent: "receiver" });
    const t0 = performance.now();
    for (const [ref, tip] of anchors) await validateReceived(store, ref, tip, null, store.now());
    const ms = performance.now() - t0;
    store.close();
    return ms;
  })();

  for (let i = 0; i < UPDATES; i++) await claim(w, `t-${i}`);
  w.close();
  gitOut(writer, "push", "-q", "--force", bare, "refs/handoff/*:refs/handoff/*");
  const receive = timed(["sync"], receiver);
  const v = await validateAll(receiver, anchors);
  const idle = timed(["sync"], receiver);

  console.log(`\nvalidation on receive (${UPDATES} tasks, then ${v.commits} task updates; bare repo by path)`);
  console.log(`  per received commit, replayed from its parent        ${(v.ms / v.commits).toFixed(3)} ms   (budget 2 ms)`);
  console.log(`  first sight, the task's history from its creation, per ref ${(tipOnly / anchors.size).toFixed(3)} ms`);
  console.log(`  validation / whole sync receiving the updates         ${(v.ms / receive).toFixed(2)}x`);
  console.log(`  first sync (${anchors.size} refs seen first) / update sync   ${(first / receive).toFixed(2)}x`);
  console.log(`  sync with nothing new / sync receiving the updates    ${(idle / receive).toFixed(2)}x`);
} finally {
  cleanupTemp();
}
