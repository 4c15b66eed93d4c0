// What a failed unit of the session loop leaves, and why its agent ended. A unit whose agent never
// got as far as a commit (a command not found, a client that refused) has nothing to look at: its
// worktree and branch go, and only its folder with agent.log stays. The last line of that log is
// kept in the unit's note, so `loop status` says why, from any worktree.
import { closeSync, existsSync, fstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import type { LoopUnit } from "../core/loop-record.ts";
import { oneLine } from "../core/one-line.ts";
import { shellQuote } from "../core/shell-quote.ts";
import { branchTip } from "../git/branch-integrate.ts";
import type { Store } from "../store/store.ts";
import { cleanupUnit, releaseUnit, unitHome, updateUnit } from "./loop-units.ts";

/**
 * The unit's agent ended (`ended` says how) with `open` tasks not done: the claims it still holds
 * go back, and the unit is `failed`, its note saying why, what was released, the agent's last
 * line and what was left where.
 */
export async function failUnit(store: Store, loopId: string, u: LoopUnit, ended: string, open: { id: string; status: string }[], log: (line: string) => void): Promise<void> {
  const released = await releaseUnit(store, u);
  const said = agentLastLine(store, loopId, u);
  const left = await leaveFailedUnit(store, loopId, u);
  const note = [`${ended} with ${open.map((t) => `${t.id} is ${t.status}`).join(", ")}`, released.length ? `released ${released.join(", ")}` : null, said !== null ? `its last output: ${JSON.stringify(said)}` : null, left.note].filter(Boolean).join("; ");
  await updateUnit(store, u.id, (x) => ({ ...x, phase: "failed", pid: null, kept: left.kept, finished_at: store.now().toISOString(), note }), `${u.id} failed`);
  log(`${u.id}: failed: ${note}`);
}

/** How much of the end of agent.log is read for its last line, and how long that line may be. */
const LOG_TAIL_BYTES = 4096;
const LAST_LINE_CHARS = 200;

/**
 * The last line the unit's agent wrote to agent.log (its folder's, as unitHome finds it), cut to
 * LAST_LINE_CHARS: most often why it ended (`./do-unit.sh: not found`, a client's error). Stored
 * in the unit's note as it is; every text view escapes it for the terminal (present/).
 */
export function agentLastLine(store: Store, loopId: string, u: LoopUnit): string | null {
  const home = unitHome(store, loopId, u);
  if (!home) return null;
  let text: string;
  try {
    const fd = openSync(join(home, "agent.log"), "r");
    try {
      const size = fstatSync(fd).size;
      const buf = Buffer.alloc(Math.min(size, LOG_TAIL_BYTES));
      readSync(fd, buf, 0, buf.length, size - buf.length);
      text = buf.toString("utf8");
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  const last = text.split(/\r?\n|\r/).map((l) => l.trim()).filter(Boolean).at(-1);
  return last ? oneLine(last, LAST_LINE_CHARS) : null;
}

/**
 * What a failed unit leaves. Nothing committed on its branch and nothing uncommitted in its
 * worktree: both are removed (there is nothing to look at), its folder stays with agent.log. Else
 * both are kept for someone to look at, and the note says where and how to remove them.
 */
export async function leaveFailedUnit(store: Store, loopId: string, u: LoopUnit): Promise<{ kept: boolean; note: string }> {
  const home = unitHome(store, loopId, u);
  const log = home ? `; its output is in ${join(home, "agent.log")}` : "";
  const tip = u.branch ? await branchTip(store.cwd, u.branch) : null;
  if (tip !== null && tip === u.base) {
    const why = await cleanupUnit(store, loopId, u, { dropBranch: true, keepFolder: true });
    if (!why) return { kept: false, note: `nothing was committed: its worktree and branch were removed${log}` };
    return { kept: true, note: `${why}${removeHint(u)}${log}` };
  }
  const kept = [tip !== null ? `${u.branch} (it has commits)` : null, u.worktree && existsSync(u.worktree) ? u.worktree : null].filter(Boolean).join(" and ");
  return { kept: kept !== "", note: `kept ${kept || "nothing"}${removeHint(u)}${log}` };
}

/** How to remove what a failed unit kept, once looked at. */
function removeHint(u: LoopUnit): string {
  const steps = [u.worktree && existsSync(u.worktree) ? `git worktree remove --force ${shellQuote(u.worktree)}` : null, u.branch ? `git branch -D ${shellQuote(u.branch)}` : null].filter(Boolean);
  return steps.length ? ` (when done with them: ${steps.join(" && ")})` : "";
}
