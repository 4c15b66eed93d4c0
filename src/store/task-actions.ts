// The task operations every front end offers (CLI, MCP, hooks), each one call: resolve input,
// run the pure operation under compare-and-swap, return the new record.
import { parseDuration } from "../core/duration.ts";
import { HandoffError } from "../core/errors.ts";
import type { Task } from "../core/task.ts";
import {
  cancelTask,
  claimTask,
  completeTask,
  failTask,
  reclaimTask,
  releaseTask,
  renewTask,
} from "../core/task-ops.ts";
import { resolveCommit } from "../git/commits.ts";
import type { Store } from "./store.ts";
import { claimNext, mutateTask } from "./task-store.ts";

function ttlOf(store: Store, ttl: string | undefined): number {
  return ttl === undefined ? store.config.claimTtlMs : parseDuration(ttl, "--ttl");
}

export function claim(store: Store, id: string, opts: { ttl?: string } = {}): Promise<Task> {
  const ttl = ttlOf(store, opts.ttl);
  return mutateTask(store, id, (t, ctx) => claimTask(t, ctx, ttl), { exclusive: true });
}

export async function claimNextTask(store: Store, opts: { ttl?: string } = {}): Promise<Task> {
  const ttl = ttlOf(store, opts.ttl);
  try {
    return await claimNext(store, (t, ctx) => claimTask(t, ctx, ttl));
  } catch (e) {
    // Nothing ready here may only mean this clone has not seen the remote's tasks yet.
    const remote = e instanceof HandoffError && e.code === "no_task_ready" ? await store.syncRemote() : null;
    if (!remote) throw e;
    const r = await (await import("./remote-cas.ts")).refresh(store, remote);
    // Even when this refresh applied nothing, a concurrent one of this clone may have.
    if (!r.ok) throw e;
    return claimNext(store, (t, ctx) => claimTask(t, ctx, ttl));
  }
}

export function renew(store: Store, id: string, opts: { ttl?: string } = {}): Promise<Task> {
  const ttl = opts.ttl === undefined ? undefined : parseDuration(opts.ttl, "--ttl");
  return mutateTask(store, id, (t, ctx) => renewTask(t, ctx, ttl));
}

export function release(store: Store, id: string): Promise<Task> {
  return mutateTask(store, id, releaseTask);
}

export async function done(store: Store, id: string, opts: { commit?: string; note?: string } = {}): Promise<Task> {
  const commit = opts.commit !== undefined ? await resolveCommit(store.cwd, opts.commit) : undefined;
  const result = { ...(commit ? { commit } : {}), ...(opts.note !== undefined ? { note: opts.note } : {}) };
  return mutateTask(store, id, (t, ctx) => completeTask(t, ctx, result));
}

export function failWith(store: Store, id: string, reason: string): Promise<Task> {
  return mutateTask(store, id, (t, ctx) => failTask(t, ctx, reason));
}

export function reclaim(store: Store, id: string, reason: string): Promise<Task> {
  return mutateTask(store, id, (t, ctx) => reclaimTask(t, ctx, reason), { exclusive: true });
}

export function cancel(store: Store, id: string, reason: string): Promise<Task> {
  return mutateTask(store, id, (t, ctx) => cancelTask(t, ctx, reason));
}
