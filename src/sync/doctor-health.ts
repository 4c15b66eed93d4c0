// doctor's checks of what a crash or a concurrent `git gc` leaves behind, each able to repair.
import { lockChecks } from "./doctor-locks.ts";
import type { Check } from "./doctor.ts";
import type { Store } from "../store/store.ts";

export async function healthChecks(store: Store, repair: boolean): Promise<Check[]> {
  return [...lockChecks(store, repair)];
}
