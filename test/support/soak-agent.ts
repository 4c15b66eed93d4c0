// One agent of the soak: its own process, looping claim --next -> work -> done -> sync through
// the store (the paths `git handoff claim --next`, `done` and `sync` take) until no task is left.
// Every push, ref listing and fetch of the remote goes through the git layer's count
// (src/git/remote-calls.ts), whether git or this process made it (over HTTP, src/git/http-remote.ts),
// so push attempts, ls-remotes and fetches are counted per step, exactly.
// Usage: node --import tsx soak-agent.ts (or its bundle, support/bundle.ts) <repo> <agent> <deadline-epoch-ms>
// Prints one JSON line per step: {step: "claim"|"sync"|"idle"|"error", ...}, then {step: "end"}.
import { observeRemoteCalls, type RemoteCallKind } from "../../src/git/remote-calls.ts";
import { recordRemoteCall } from "../../src/sync/remote-traffic.ts";
import { HandoffError } from "../../src/core/errors.ts";
import { isFinal } from "../../src/core/task.ts";
import { claimNextTask, done } from "../../src/store/task-actions.ts";
import { listTasks } from "../../src/store/task-store.ts";
import { startSessionFor } from "../../src/store/agent-store.ts";
import { openSyncedStore } from "../../src/sync/open.ts";
import { sync } from "../../src/sync/sync.ts";

const [repo, agent, deadlineText] = process.argv.slice(2) as [string, string, string];
const deadline = Number(deadlineText);

const calls: Record<RemoteCallKind, number> = { push: 0, "ls-remote": 0, fetch: 0 };
/** Remote calls made since the last call, by kind. */
function counts(): { pushes: number; lsRemotes: number; fetches: number } {
  const out = { pushes: calls.push, lsRemotes: calls["ls-remote"], fetches: calls.fetch };
  calls.push = calls["ls-remote"] = calls.fetch = 0;
  return out;
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
// Counted here and still in the clone's traffic log (the push budget reads it), as the store set up.
observeRemoteCalls((_cwd, remote, kind) => {
  calls[kind]++;
  recordRemoteCall(store, remote, kind);
});
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
