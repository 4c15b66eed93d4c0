// Ending the session loop: `loop stop` asks a live loop to stop (or stops one whose process is
// gone), the loop stops itself on that or Ctrl-C, and `--abandon` ends a record this clone cannot
// act on.
import { fail } from "../core/errors.ts";
import { isLoopActive, isTerminal, type LoopRecord } from "../core/loop-record.ts";
import { branchTip, isAncestor } from "../git/branch-integrate.ts";
import { changeLoop, loadLoop, loopStartedHere, ownLoopProblem } from "../store/loop-store.ts";
import type { Store } from "../store/store.ts";
import { pause } from "../sync/follow-ref.ts";
import { runnerHere } from "./loop-begin.ts";
import { cleanupUnit, HOST, ownAgent, pidAlive, releaseUnit, stopAgent, updateUnit } from "./loop-units.ts";

/**
 * Ends the loop: agents stopped (their process groups), their claims given back, worktrees without
 * uncommitted work removed (a branch only when it holds nothing new), the record `stopped`. Run by
 * the loop itself on `loop stop` or Ctrl-C, or by `loop stop` when the loop's process is gone.
 */
export async function stopLoop(store: Store, log: (l: string) => void): Promise<LoopRecord | null> {
  const rec = (await loadLoop(store))?.record;
  if (!rec || !isLoopActive(rec)) return rec ?? null;
  // Stopping releases claims as the units' agents: only for the units this clone planned.
  const notOurs = ownLoopProblem(store, rec);
  if (notOurs) fail("held_by_other", `${notOurs}; nothing it names is acted on here`, { loop: rec.id }, [{ action: "reclaim", detail: "git handoff loop stop --abandon (acts on nothing the record names)" }]);
  const tip = await branchTip(store.cwd, rec.integration);
  for (const u of rec.units) {
    if (isTerminal(u.phase)) continue;
    // A merge cut off after the branch moved is a merge: say so rather than "stopped".
    if (u.phase === "merging" && u.result && tip && (await isAncestor(store.cwd, u.result, tip))) {
      await updateUnit(store, u.id, (x) => ({ ...x, phase: "merged", kept: true, finished_at: store.now().toISOString(), note: "merged before the loop stopped; its branch and worktree are kept" }), `${u.id} merged`);
      continue;
    }
    // Only an agent this clone started is signalled (its pid file, not the record's pid).
    const own = u.host === HOST ? ownAgent(store, rec.id, u) : null;
    const unsent = own ? await stopAgent(own) : u.pid && u.host === HOST ? `pid ${u.pid} not signalled: no agent this clone started is recorded for it` : null;
    const released = u.phase === "planned" ? [] : await releaseUnit(store, u);
    let note = [unsent, released.length ? `released ${released.join(", ")}` : null].filter(Boolean).join("; ") || null;
    let kept = false;
    if (u.worktree) {
      const tip = u.branch ? await branchTip(store.cwd, u.branch) : null;
      const k = await cleanupUnit(store, rec.id, u, { dropBranch: tip === u.base });
      kept = !!k || (tip !== null && tip !== u.base);
      note = [note, k ?? (kept ? `kept ${u.branch}: it has commits` : null)].filter(Boolean).join("; ") || null;
    }
    await updateUnit(store, u.id, (x) => ({ ...x, phase: "stopped", pid: null, kept, note, finished_at: store.now().toISOString() }), `${u.id} stopped`);
    log(`${u.id}: stopped${note ? `: ${note}` : ""}`);
  }
  return changeLoop(store, (c) => (c && c.id === rec.id ? { record: { ...c, phase: "stopped" }, note: "stopped" } : null));
}

/**
 * `loop stop --abandon`: ends the record of a loop this clone cannot stop (its runner is on another
 * host that is gone, or the record came through the sync remote and names a runner nobody will
 * ever hear), so `loop run` may start anew. Nothing the record names is acted on here: no process
 * signalled, no folder or branch removed, no claim released (claims expire on their own). A runner
 * still alive elsewhere ends at its next round: it finds its loop stopped.
 */
export async function abandonLoop(store: Store, log: (l: string) => void): Promise<LoopRecord | null> {
  const cur = (await loadLoop(store))?.record ?? null;
  if (!cur || !isLoopActive(cur)) return cur;
  const r = cur.runner;
  if (r.host === HOST && loopStartedHere(store, cur.id) && r.pid !== process.pid && pidAlive(r.pid, r.start)) {
    fail("wrong_state", `loop ${cur.id} runs here (pid ${r.pid}): end it with loop stop, which stops its agents and cleans up`, { loop: cur.id, pid: r.pid });
  }
  const at = store.now().toISOString();
  const note = `abandoned by ${store.actor.agent}: nothing it names was acted on here`;
  const out = await changeLoop(store, (c) =>
    c && c.id === cur.id && isLoopActive(c)
      ? { record: { ...c, phase: "stopped", units: c.units.map((u) => (isTerminal(u.phase) ? u : { ...u, phase: "stopped", note, finished_at: at })) }, note }
      : null,
  );
  log(`${cur.id}: abandoned (runner pid ${r.pid} on ${r.host}); its agents, folders, branches and claims are left as they are`);
  return out ?? (await loadLoop(store))?.record ?? null;
}

/** `loop stop`: asks a live loop to stop and waits for it, or stops a loop whose process is gone. */
export async function requestStop(store: Store, o: { timeoutMs: number; log: (l: string) => void }): Promise<LoopRecord | null> {
  const cur = (await loadLoop(store))?.record ?? null;
  if (!cur || !isLoopActive(cur)) return cur;
  const notOurs = cur.runner.host === HOST ? ownLoopProblem(store, cur) : null;
  if (notOurs) {
    // A record naming this host that no loop here wrote (or not as planned here) came through the
    // sync remote: it may name any process, folder, agent of yours. Ask its runner to stop; act on
    // nothing it names.
    await changeLoop(store, (c) => (c && c.id === cur.id && c.phase === "running" ? { record: { ...c, phase: "stopping" }, note: `stop asked by ${store.actor.agent}` } : null));
    o.log(`${notOurs}: asked it to stop; no process is signalled and no folder removed here (if no runner ever answers: loop stop --abandon)`);
    return (await loadLoop(store))?.record ?? null;
  }
  const live = cur.runner.host === HOST ? pidAlive(cur.runner.pid, cur.runner.start) && cur.runner.pid !== process.pid : true;
  if (!live) {
    o.log(`${cur.id}: its process (pid ${cur.runner.pid}) is gone; stopping it here`);
    await changeLoop(store, (c) => (c && c.id === cur.id ? { record: { ...c, runner: runnerHere(store) }, note: "taken over to stop" } : null));
    return stopLoop(store, o.log);
  }
  await changeLoop(store, (c) => (c && c.id === cur.id && c.phase === "running" ? { record: { ...c, phase: "stopping" }, note: `stop asked by ${store.actor.agent}` } : null));
  const t0 = Date.now();
  for (;;) {
    const r = (await loadLoop(store))?.record ?? null;
    if (!r || !isLoopActive(r)) return r;
    if (cur.runner.host === HOST && !pidAlive(cur.runner.pid, cur.runner.start)) return stopLoop(store, o.log);
    if (Date.now() - t0 > o.timeoutMs) fail("timed_out", `loop ${cur.id} (pid ${cur.runner.pid}) did not stop within ${Math.round(o.timeoutMs / 1000)} s; it is still asked to`, { loop: cur.id });
    await pause(200);
  }
}
