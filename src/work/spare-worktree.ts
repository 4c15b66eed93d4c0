// A worktree made ahead for the next task: `git worktree add` checks out the whole tree (three
// git processes), and a waiter on another machine would wait for it between the claim and the
// command. A worker keeps one detached worktree at the commit a task without its own base starts
// from (the integration branch's tip), made while it idles; a task whose base is that commit takes
// it, any other gets a fresh one as before. Never used twice: taken, it is the task's, removed
// with the task's folder; a new one is made after.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isObjectId } from "../core/object-id.ts";
import { addDetachedWorktree, removeWorktree } from "../git/worktree.ts";
import { markOwner } from "./leftovers.ts";

export interface Spare {
  /** The task's folder (the worktree is `<home>/worktree`). */
  home: string;
  commit: string;
}

export interface SpareWorktrees {
  /** The spare when it sits at `commit` (a full object id); it is then the caller's to remove. */
  take(commit: string): Spare | null;
  /** Makes a spare at the commit `commit()` gives (an object id) if none is ready, in the background: callers do not wait. */
  prepare(commit: () => Promise<string>): void;
  /** Removes an unused spare, or one still being made; none is made after (the worker stops). */
  dispose(): Promise<void>;
}

/** Spare worktrees of the repository at `cwd` (whose common git folder is `commonDir`). */
export function spareWorktrees(cwd: string, commonDir: string): SpareWorktrees {
  let ready: Spare | null = null;
  let making: Promise<void> | null = null;
  let closed = false;
  const drop = async (s: Spare) => {
    await removeWorktree(cwd, join(s.home, "worktree")).catch(() => {});
    rmSync(s.home, { recursive: true, force: true });
  };
  return {
    take(commit) {
      if (!ready || ready.commit !== commit) return null;
      const s = ready;
      ready = null;
      return s;
    },
    prepare(resolve) {
      if (making || closed) return;
      making = (async () => {
        const commit = await resolve();
        if (!isObjectId(commit) || closed) return;
        if (ready?.commit === commit) return;
        if (ready) {
          const old = ready;
          ready = null;
          await drop(old);
        }
        const home = mkdtempSync(join(tmpdir(), "handoff-next-"));
        try {
          markOwner(home, commonDir);
          await addDetachedWorktree(cwd, join(home, "worktree"), commit);
          ready = { home, commit };
          // Stopped meanwhile: dispose() is waiting for this to end, then removes it.
        } catch {
          // Nothing lost: the next task makes its own worktree, as without a spare.
          rmSync(home, { recursive: true, force: true });
        }
      })()
        .catch(() => {})
        .finally(() => (making = null));
    },
    async dispose() {
      closed = true;
      await making;
      if (ready) await drop(ready);
      ready = null;
    },
  };
}
