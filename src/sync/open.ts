// Front ends open their store here: the store itself knows only this clone, and the sync layer
// hands it the gate through which exclusive writes reach the sync remote.
import { HandoffError } from "../core/errors.ts";
import { heldAsNewer } from "./newer-refs.ts";
import { refuseNewer } from "./quarantine.ts";
import { countRemoteCalls } from "./remote-traffic.ts";
import { graceOnFile } from "./skew.ts";
import { openStore, TASKS_PREFIX, type Attempt, type OpenOptions, type RemoteGate, type Store } from "../store/store.ts";

const gate: RemoteGate = {
  // Loaded on first use: most hook and CLI calls never touch the remote.
  exclusive: async (store, remote, attempt, opts) => (await import("./remote-cas.ts")).remoteCasLoop(store, remote, refusingQuarantined(store, remote, attempt), opts),
  refresh: async (store, remote) => (await import("./remote-cas.ts")).refresh(store, remote),
  deferred: async (store, remote, updates) => (await import("./pending-push.ts")).deferWrite(store, remote, updates),
  grace: (store, remote) => graceOnFile(store, remote),
  newer: (store) => heldAsNewer(store),
  guardWrite: async (store, refs) => refuseNewer(await heldAsNewer(store), refs),
};

/**
 * An exclusive write to an entity whose remote copy failed validation is refused before any push;
 * so is one that found no such task here because the remote's copy was refused on receive (a task
 * first seen with a forged history never enters this clone): "quarantined", not "no task".
 */
function refusingQuarantined<R>(store: Store, remote: string, attempt: Attempt<R>): Attempt<R> {
  return async (now) => {
    let out: Awaited<ReturnType<Attempt<R>>>;
    try {
      out = await attempt(now);
    } catch (e) {
      const task = e instanceof HandoffError && e.code === "not_found" ? e.refusal.data?.task : undefined;
      if (typeof task === "string") await (await import("./quarantine.ts")).refuseQuarantined(store, remote, [TASKS_PREFIX + task]);
      throw e;
    }
    if (out.updates.length) await (await import("./quarantine.ts")).refuseQuarantined(store, remote, out.updates.map((u) => u.ref));
    return out;
  };
}

/** Gives a store opened elsewhere (tests, benchmarks) the sync layer's gate. */
export function withSync(store: Store): Store {
  store.remoteGate = gate;
  countRemoteCalls(store);
  return store;
}

export async function openSyncedStore(opts: OpenOptions): Promise<Store> {
  return withSync(await openStore(opts));
}
