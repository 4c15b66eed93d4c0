import * as z from "zod/mini";
import { AgentScope } from "./identity.ts";
import { count, isoTime, lazySchema } from "./schema-helpers.ts";

export const MAX_LEASE_PATTERNS = 100;
export const MAX_REASON = 500;

/**
 * One agent's hold on one path or glob. Exclusive leases are never granted to two agents whose
 * patterns overlap; shared ones only make others warned. Expiry is lazy, as for task claims.
 */
export const Lease = lazySchema(() =>
  z.object({
    /** Repo-relative POSIX path or glob (`src/api/**`). */
    pattern: z.string(),
    agent: z.string(),
    /** The task this lease serves: claiming a task leases its scope, finishing it releases them. */
    task: z.nullable(z.string()),
    exclusive: z.boolean(),
    acquired_at: isoTime(),
    expires_at: isoTime(),
    ttl_ms: count(),
    reason: z.nullable(z.string()),
    /** Taken by declare-by-doing (an agent's first edit), not asked for. */
    auto: z.optional(z.boolean()),
    worktree: z.nullable(z.string()),
    branch: z.nullable(z.string()),
    scope: AgentScope,
  }),
);
export type Lease = z.infer<typeof Lease>;

/** Every live (or not yet swept) lease of the repository: one record, so a check is one read. */
export const LeaseSet = lazySchema(() => z.object({ leases: z.array(Lease) }));
export type LeaseSet = z.infer<typeof LeaseSet>;

export const EMPTY_LEASES: LeaseSet = { leases: [] };

/** Parsed expiry times: every write checks every lease, and a lease record is never mutated. */
const expiries = new WeakMap<Lease, number>();

/** `l.expires_at` in ms, parsed once per lease. */
export function expiryOf(l: Lease): number {
  let at = expiries.get(l);
  if (at === undefined) expiries.set(l, (at = Date.parse(l.expires_at)));
  return at;
}

export function isLeaseLive(l: Lease, now: Date): boolean {
  return expiryOf(l) > now.getTime();
}

/**
 * Whether `l` still stands in `agent`'s way: another agent's lease counts as live for `graceMs`
 * past its expiry (the takeover grace for clock skew, clock-skew.ts); the caller's own, exactly
 * until it expires.
 */
export function isLeaseLiveFor(l: Lease, now: Date, agent: string, graceMs = 0): boolean {
  if (isLeaseLive(l, now)) return true;
  return graceMs > 0 && l.agent !== agent && isLeaseLive(l, new Date(now.getTime() - graceMs));
}

/**
 * When another agent's lease, expired by this clock, stops standing for `agent` (its expiry plus
 * the takeover grace), or null when it has not expired or stands no more: what a view shows
 * beside such a lease, so it lists what a write would refuse (isLeaseLiveFor).
 */
export function graceUntil(l: Lease, now: Date, agent: string, graceMs = 0): string | null {
  if (isLeaseLive(l, now) || !isLeaseLiveFor(l, now, agent, graceMs)) return null;
  return new Date(expiryOf(l) + graceMs).toISOString();
}
