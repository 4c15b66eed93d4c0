// doctor's session-loop check: a loop whose process is gone (resume it or stop it), and the units
// it kept for someone to look at (not merged, or --keep).
import { hostname } from "node:os";
import { existsSync } from "node:fs";
import { isLoopActive } from "../core/loop-record.ts";
import { processAlive } from "../git/process-alive.ts";
import { damageBelow } from "../git/connectivity.ts";
import { LOOP_REF, loadLoop, ownLoopProblem } from "../store/loop-store.ts";
import type { Store } from "../store/store.ts";
import type { Check } from "./doctor-check.ts";

export async function loopCheck(store: Store): Promise<Check> {
  let rec;
  try {
    rec = (await loadLoop(store))?.record ?? null;
  } catch (e) {
    return { name: "loop", status: "fail", detail: (e as Error).message, fix: await unreadableLoopFix(store) };
  }
  if (!rec) return { name: "loop", status: "ok", detail: "no session loop has run here" };
  const kept = rec.units.filter((u) => u.kept && u.worktree && existsSync(u.worktree)).map((u) => `${u.id} (${u.phase}) in ${u.worktree}`);
  const keptText = kept.length ? `; kept for you: ${kept.join(", ")}` : "";
  if (!isLoopActive(rec)) return { name: "loop", status: "ok", detail: `loop ${rec.id} is ${rec.phase}${keptText}` };
  const r = rec.runner;
  // Resuming or stopping acts on processes and folders: only for a loop started in this clone.
  const notOurs = r.host === hostname() ? ownLoopProblem(store, rec) : null;
  if (notOurs) {
    return { name: "loop", status: "warn", detail: `loop ${rec.id} names this host (pid ${r.pid}) but ${notOurs.startsWith(`loop ${rec.id} was not started`) ? "was not started in this clone: its record came through the sync remote" : `is not as this clone started it (${notOurs})`}; nothing here resumes it or acts on the processes and folders it names${keptText}`, fix: "if no runner answers it: git handoff loop stop --abandon (ends the record, acts on nothing it names)" };
  }
  if (r.host !== hostname()) return { name: "loop", status: "ok", detail: `loop ${rec.id} is ${rec.phase} on ${r.host} (pid ${r.pid}); if that host is gone for good: git handoff loop stop --abandon${keptText}` };
  if (processAlive(r.pid, r.start)) return { name: "loop", status: "ok", detail: `loop ${rec.id} is ${rec.phase} (pid ${r.pid})${keptText}` };
  const live = rec.units.filter((u) => (u.phase === "running" || u.phase === "starting") && u.host === hostname() && processAlive(u.pid, u.pid_start)).map((u) => u.id);
  return {
    name: "loop",
    status: "warn",
    detail: `loop ${rec.id}'s process (pid ${r.pid}) is gone while it is ${rec.phase}${live.length ? `; its agents of ${live.join(", ")} still run` : ""}${keptText}`,
    fix: "resume it: git handoff loop run --agent-cmd CMD (the same command), or end it: git handoff loop stop",
  };
}

/**
 * What fixes a loop record that cannot be read. --repair only where the objects check finds its
 * objects missing or unreadable to git (the same judgement, damageBelow: that repair restores or
 * removes the ref); a record whose objects are whole but do not parse here (made by hand, or by a
 * newer git-handoff in this clone) --repair leaves alone, so the fix says what removes it.
 */
async function unreadableLoopFix(store: Store): Promise<string> {
  const tip = await store.readRef(LOOP_REF);
  if (!tip || (await damageBelow(store.storeCwd, tip))) return "git handoff doctor --repair";
  return `inspect it with git log -p ${LOOP_REF}; if no loop runs (or a newer git-handoff wrote it: upgrade), remove it: git update-ref -d ${LOOP_REF}`;
}
