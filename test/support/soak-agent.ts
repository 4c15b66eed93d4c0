// One agent of the soak: its own process, looping claim --next -> work -> done -> sync through
// the store (the paths `git handoff claim --next`, `done` and `sync` take) until no task is left.
// git's own trace (GIT_TRACE, this process only) says which git commands each step ran, so push
// attempts, ls-remotes and fetches are counted per step, exactly.
// Usage: node --import tsx soak-agent.ts (or its bundle, support/bundle.ts) <repo> <agent> <trace-file> <deadline-epoch-ms>
// Prints one JSON line per step: {step: "claim"|"sync"|"idle"|"error", ...}, then {step: "end"}.
import { readFileSync, writeFileSync } from "node:fs";
import { HandoffError } from "../../src/core/errors.ts";
import { isFinal } from "../../src/core/task.ts";
import { claimNextTask, done } from "../../src/store/task-actions.ts";
import { listTasks } from "../../src/store/task-store.ts";
import { startSessionFor } from "../../src/store/agent-store.ts";
import { openSyncedStore } from "../../src/sync/open.ts";
import { sync } from "../../src/sync/sync.ts";

const [repo, agent, trace, deadlineText] = process.argv.slice(2) as [string, string, string, string];
const deadline = Number(deadlineText);
writeFileSync(trace, "");
process.env.GIT_TRACE = trace;

let seen = 0;
/** git commands run since the last call, by verb. */
function counts(): { pushes: number; lsRemotes: number; fetches: number } {
  const text = readFileSync(trace, "utf8");
  const lines = text.slice(seen).split("\n").filter((l) => l.includes(" trace: built-in: git "));
  seen = text.length;
  const n = (verb: string) => lines.filter((l) => l.includes(`trace: built-in: git ${verb} `)).length;
  return { pushes: n("push"), lsRemotes: n("ls-remote"), fetches: n("fetch") };
}

const say = (o: object) => process.stdout.write(`${JSON.stringify(o)}\n`);
const TRANSIENT = /^(lost_race|remote_timeout|remote_unreachable|outcome_unknown)$/;

/** A sync whose transient failure (a loaded machine, a busy remote) is reported, not fatal. */
async function syncReporting(): Promise<boolean> {
  try {
    await sync(store);
    return true;
  } catch (e) {
    if (!(e instanceof HandoffError) || !TRANSIENT.test(e.code)) throw e;
    say({ step: "error", code: e.code, message: e.message, during: "sync", ...counts() });
    await new Promise((r) => setTimeout(r, 100 + Math.random() * 400));
    return false;
  }
}
const store = await openSyncedStore({ cwd: repo, agent, env: { ...process.env, HANDOFF_AGENT: agent } });
let idle = 0;
let errors = 0;
try {
  // An agent joins as a real one does (its SessionStart hook or `git handoff session start`): a
  // declaration on the roster, shared by the first sync, tells the others it may be claiming.
  await startSessionFor(store, { objective: "soak: claim --next until nothing is left", files: [], awaits: null, session: null });
  counts();
  await syncReporting();
  counts();
  while (Date.now() < deadline) {
    counts();
    const t0 = performance.now();
    let id: string;
    try {
      id = (await claimNextTask(store)).id;
    } catch (e) {
      if (!(e instanceof HandoffError)) throw e;
      const spent = { ms: performance.now() - t0, ...counts() };
      if (e.code !== "no_task_ready") {
        say({ step: "error", code: e.code, message: e.message, ...spent });
        // A refusal that would only repeat ends this agent; others are retried after a pause.
        if (!TRANSIENT.test(e.code) || ++errors >= 20) break;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 400));
        continue;
      }
      // Nothing ready here: finished, or the rest is held by others; sync and look again.
      await syncReporting();
      say({ step: "idle", ...spent, ...counts() });
      const { tasks } = await listTasks(store);
      if (tasks.every((t) => isFinal(t.status))) break;
      await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** Math.min(idle++, 4)) * (0.5 + Math.random() / 2)));
      continue;
    }
    idle = 0;
    errors = 0;
    say({ step: "claim", id, ms: performance.now() - t0, ...counts() });
    await done(store, id, { note: `done by ${agent}` });
    const s0 = performance.now();
    if (await syncReporting()) say({ step: "sync", ms: performance.now() - s0, ...counts() });
  }
} finally {
  store.close();
}
say({ step: "end" });
