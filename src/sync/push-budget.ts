// The push budget: how many pushes a minute this clone spends on writes that need not go out at
// once (renewals, heartbeats). `git config handoff.maxPushesPerMinute` (default 6, the rate the
// largest host recommends per repository). Exclusive grants and writes someone waits on are never
// held back by it, but they count, and they carry whatever is pending (pending-push.ts).
import { fail } from "../core/errors.ts";
import { configFileStamp, configGet } from "../git/config.ts";
import type { Store } from "../store/store.ts";
import { readTraffic } from "./remote-traffic.ts";

export const DEFAULT_MAX_PUSHES_PER_MINUTE = 6;
const WINDOW_MS = 60_000;

const configured = new WeakMap<Store, { stamp: string; value: Promise<number> }>();

/** The clone's budget, read again only when .git/config changed (a running worker follows it). */
export function maxPushesPerMinute(store: Store): Promise<number> {
  const stamp = configFileStamp(store.repo.commonDir);
  const known = configured.get(store);
  let p = known && known.stamp === stamp ? known.value : undefined;
  if (!p) {
    p = (async () => {
      const text = await configGet(store.cwd, "handoff.maxPushesPerMinute");
      if (text === null) return DEFAULT_MAX_PUSHES_PER_MINUTE;
      const n = Number(text);
      if (!Number.isInteger(n) || n < 1 || n > 600) {
        fail("invalid_input", `git config handoff.maxPushesPerMinute must be a whole number from 1 to 600, got ${JSON.stringify(text)}`, { value: text }, [
          { action: "fix_input", detail: "git config handoff.maxPushesPerMinute 6" },
        ]);
      }
      return n;
    })();
    configured.set(store, { stamp, value: p });
  }
  return p;
}

export interface BudgetState {
  max: number;
  /** Pushes of this clone in the last minute (by the store's clock). */
  used: number;
  /** A deferrable push may go now. */
  allows: boolean;
  /** When it may (epoch ms by the store's clock): the oldest counted push leaves the window. */
  freeAt: number;
}

export async function pushBudget(store: Store, remote: string): Promise<BudgetState> {
  const max = await maxPushesPerMinute(store);
  const now = store.now().getTime();
  const pushes = readTraffic(store, remote, now - WINDOW_MS + 1).filter((c) => c.kind === "push");
  const used = pushes.length;
  const allows = used < max;
  const freeAt = allows ? now : pushes[used - max]!.at + WINDOW_MS;
  return { max, used, allows, freeAt };
}
