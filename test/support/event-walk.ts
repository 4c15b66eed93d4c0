// The event-index tests' oracle: what a walk of the whole history answers (no index), in process.
import { readEvents } from "../../src/store/events.ts";
import { openSyncedStore } from "../../src/sync/open.ts";

export async function walked(repo: string, filter: Parameters<typeof readEvents>[1] = {}) {
  const store = await openSyncedStore({ cwd: repo, agent: "oracle" });
  try {
    return await readEvents(store, filter, { onProblem: () => {} });
  } finally {
    store.close();
  }
}
