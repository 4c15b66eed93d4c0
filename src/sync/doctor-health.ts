// doctor's checks of what a crash or a concurrent `git gc` leaves behind, each able to repair.
import { lockChecks } from "./doctor-locks.ts";
import { objectChecks } from "./doctor-objects.ts";
import type { Check } from "./doctor-check.ts";
import type { Store } from "../store/store.ts";

export async function healthChecks(store: Store, repair: boolean): Promise<Check[]> {
  // Locks first: a stale ref lock would make the object repair's ref updates fail.
  return [...lockChecks(store, repair), ...(await objectChecks(store, repair))];
}
