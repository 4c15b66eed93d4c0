// Following the remote's task queue while waiting for work (MCP `watch`): one small advertisement
// of refs/handoff/tasks/* per look, and a full refresh (fetch and integrate) only when a task ref
// there differs from what this clone last fetched. New tasks have no ref to follow yet, so the
// shared poller's exact-ref looks cannot see them: this looks at the family instead.
import { lsRemotePrefix } from "../git/remote-ref.ts";
import type { Store } from "../store/store.ts";
import { callTimeout, remoteBudget } from "./remote-budget.ts";
import { trackingTips } from "./tracking.ts";

export type QueueLook = { ok: true; changed: boolean } | { ok: false; message: string };

export const TASK_FAMILY = "refs/handoff/tasks/";

export async function lookAtQueue(store: Store, remote: string): Promise<QueueLook> {
  const budget = await remoteBudget(store, remote);
  const ls = await lsRemotePrefix(store.cwd, remote, TASK_FAMILY, callTimeout(budget));
  if (!ls.ok) return ls;
  const tracked = await trackingTips(store, remote);
  const moved = [...ls.tips].some(([ref, oid]) => tracked.get(ref) !== oid);
  if (!moved) return { ok: true, changed: false };
  if (!store.remoteGate) return { ok: false, message: "this store was opened without the sync layer" };
  const r = await store.remoteGate.refresh(store, remote);
  return r.ok ? { ok: true, changed: true } : { ok: false, message: (r as { message?: string }).message ?? "the remote could not be fetched" };
}
