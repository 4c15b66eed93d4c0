// In-process claims for race tests whose subject is the store, not the CLI.
import { HandoffError } from "../../src/core/errors.ts";
import type { Store } from "../../src/store/store.ts";
import { claimNextTask } from "../../src/store/task-actions.ts";

/** Claims tasks with `claimNextTask` until none is ready, recording each grant; `between` runs after each. */
export async function claimUntilNone(store: Store, granted: { id: string; agent: string }[], between?: () => Promise<void>): Promise<void> {
  for (;;) {
    try {
      granted.push({ id: (await claimNextTask(store, { overCapacity: true })).id, agent: store.actor.agent });
    } catch (e) {
      if (e instanceof HandoffError && e.code === "no_task_ready") return;
      throw e;
    }
    await between?.();
  }
}
