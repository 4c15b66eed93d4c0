// doctor's view of where the coordination refs live (src/store/separate-store.ts): a large set
// among the user's own refs slows the user's git; a separate store with refs left beside it (an
// interrupted move, an older git-handoff) or without its guards needs `store --separate` again.
import { layoutHealth, oldStores } from "../store/separate-store.ts";
import type { Store } from "../store/store.ts";
import type { Check } from "./doctor-check.ts";

/** Coordination refs among the repository's own past which its git fetch and push slow down measurably. */
export const SEPARATE_ADVISED_AT = 2_000;

export async function layoutCheck(store: Store): Promise<Check> {
  const h = await layoutHealth(store.repo);
  if (h.layout === "shared") {
    const old = oldStores(store.repo);
    if (old.length && !h.guards) {
      return { name: "store-layout", status: "warn", detail: `a move back among the repository's refs was stopped before it finished: ${old.join(", ")} may hold writes made during it`, fix: "git handoff store --shared (carries over what is newer there, then removes it)" };
    }
    if (h.guards) {
      return { name: "store-layout", status: "fail", detail: `the repository's guard refs say the coordination refs are in a separate store, but ${store.repo.commonDir}/handoff-store.git is not there (removed by hand?): this clone sees ${h.here} coordination refs`, fix: "restore the folder from a backup, or accept the loss: git handoff store --shared (removes the guards), then git handoff sync" };
    }
    if (h.here >= SEPARATE_ADVISED_AT) {
      return { name: "store-layout", status: "warn", detail: `${h.here} coordination refs among the repository's own: the user's git fetch and git push list every one of them`, fix: "git handoff store --separate (and a dedicated coordination remote: git handoff remote --url URL)" };
    }
    return { name: "store-layout", status: "ok", detail: `${h.here} coordination refs among the repository's own (a separate store is advised past ${SEPARATE_ADVISED_AT})` };
  }
  if (h.here || h.guards < 3) {
    const what = [h.here ? `${h.here} coordination ref(s) left among the repository's own (an interrupted move, or an older git-handoff)` : "", h.guards < 3 ? "guard refs missing (an older git-handoff could write where nobody reads)" : ""].filter(Boolean).join("; ");
    return { name: "store-layout", status: "warn", detail: `separate store ${store.repo.storeDir}: ${what}`, fix: "git handoff store --separate (carries over what is newer, removes the rest, puts the guards back)" };
  }
  return { name: "store-layout", status: "ok", detail: `${h.store} coordination refs in a separate store, ${store.repo.storeDir}` };
}
