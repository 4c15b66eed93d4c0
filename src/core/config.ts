import * as z from "zod/mini";
import { lazySchema } from "./schema-helpers.ts";
import { parseDuration } from "./duration.ts";

/**
 * A duration key: text with its unit (`30m`). A bare number (`claim_ttl: 30`) has no unit, so the
 * error says what to write instead of "expected string".
 */
const duration = () =>
  z.string({
    error: (issue) => {
      const n = typeof issue.input === "number" ? issue.input : null;
      return `expected a duration with its unit, such as 30m, 2h or 7d${n !== null ? ` (a bare number has none: write ${n}m for minutes, ${n}s for seconds)` : ""}`;
    },
  });

/** `.handoff.yaml` at the repository root: committed policy shared by every agent. */
export const ConfigFile = lazySchema(() =>
  z.strictObject({
    version: z.optional(z.literal(1)),
    /** Default lease of a task claim, as a duration (`30m`). */
    claim_ttl: z.optional(duration()),
    /** Grants that may expire without completion before the task is marked failed. */
    max_attempts: z.optional(z.int().check(z.gte(1), z.lte(100))),
    /**
     * File-lease policy. `advisory`: never block (deny becomes warn); `strict`: warn becomes deny
     * too; unset (`balanced`): only another agent's exclusive lease blocks.
     */
    mode: z.optional(z.enum(["advisory", "balanced", "strict"])),
    /** Globs never leased or checked, added to the defaults (lockfiles, dist/**, build/**). */
    ignore: z.optional(z.array(z.string().check(z.minLength(1), z.maxLength(1024))).check(z.maxLength(1000))),
    /** Whether claiming a task leases its scope exclusively (default false: shared). */
    exclusive_scope: z.optional(z.boolean()),
    /** Declare by doing: an agent's first edit of a file takes a shared lease on it. Default: on in advisory mode. */
    auto_lease: z.optional(z.boolean()),
    /** Default length of a file lease (`30m`); defaults to claim_ttl. */
    lease_ttl: z.optional(duration()),
    /** How long finished tasks stay live before compaction moves them to refs/handoff/archive (`7d`). */
    retention: z.optional(duration()),
    // agents, review, conflicts
    /** An agent's commands refresh its heartbeat at most this often. */
    heartbeat_interval: z.optional(duration()),
    /** Heartbeat older than this: the agent is `stale`. */
    stale_after: z.optional(duration()),
    /** Heartbeat older than this: the agent is `disconnected`. */
    disconnected_after: z.optional(duration()),
    /** Heartbeat older than this: the agent is garbage-collected (ref removed, claims released). */
    gc_after: z.optional(duration()),
    /** Tasks one agent is expected to hold at once (shown as capacity). */
    max_concurrent: z.optional(z.int().check(z.gte(1), z.lte(1000))),
    /**
     * No longer read (a branch's file must not choose where the policy comes from): the integration
     * branch is `git config handoff.integrationBranch`, else found (see docs/configuration.md).
     */
    integration_branch: z.optional(z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9._\/-]*$/), z.maxLength(200))),
    /** Longest a verification command may run before it is killed. */
    verify_timeout: z.optional(duration()),
    /** Characters of shared memories an agent is given at session start (SessionStart, load_context). */
    memory_budget: z.optional(z.int().check(z.gte(0), z.lte(100_000))),
    /** A claim renewed while its holder's branch has not moved for this long is flagged as possibly stuck. */
    stuck_after: z.optional(duration()),
    /** How far apart clones' clocks may be: a takeover of another agent's expired lease through a remote waits this much (plus this clone's estimated offset) past the expiry. */
    max_clock_skew: z.optional(duration()),
    /** `allow_self: true` lets an author accept its own review and a producer ack its own handoff. */
    review: z.optional(z.strictObject({ allow_self: z.optional(z.boolean()) })),
    /** The session loop (loop run): worktrees at once, how units are merged, whether finished ones are removed. */
    loop: z.optional(
      z.strictObject({
        max_worktrees: z.optional(z.int().check(z.gte(1), z.lte(64))),
        merge_strategy: z.optional(z.enum(["merge", "squash", "rebase"])),
        auto_cleanup: z.optional(z.boolean()),
      }),
    ),
  }),
);
export type ConfigFile = z.infer<typeof ConfigFile>;

export type LeaseMode = "advisory" | "balanced" | "strict";

export interface Config {
  claimTtlMs: number;
  maxAttempts: number;
  mode: LeaseMode;
  /** Extra ignore globs from the file (the defaults are added where the policy is built). */
  ignore: string[];
  exclusiveScope: boolean;
  autoLease: boolean;
  leaseTtlMs: number;
  retentionMs: number;
  heartbeatIntervalMs: number;
  staleAfterMs: number;
  disconnectedAfterMs: number;
  gcAfterMs: number;
  maxConcurrent: number;
  /** The branch everything merges into (policy source, conflict preview, diff bases); null: none found. */
  integrationBranch: string | null;
  verifyTimeoutMs: number;
  memoryBudget: number;
  /** review.allow_self: an author may accept its own review, a producer ack its own handoff. */
  reviewAllowSelf: boolean;
  loopMaxWorktrees: number;
  loopMergeStrategy: "merge" | "squash" | "rebase";
  loopAutoCleanup: boolean;
  /** stuck_after: a renewed claim whose branch stood still this long is flagged (status, dashboard). */
  stuckAfterMs: number;
  /** max_clock_skew: how far apart clones' clocks may be (skew.ts). */
  maxClockSkewMs: number;
}

export const DEFAULT_CONFIG: Config = {
  claimTtlMs: 30 * 60_000,
  maxAttempts: 3,
  mode: "balanced",
  ignore: [],
  exclusiveScope: false,
  autoLease: false,
  leaseTtlMs: 30 * 60_000,
  retentionMs: 7 * 24 * 3_600_000,
  heartbeatIntervalMs: 60_000,
  staleAfterMs: 10 * 60_000,
  disconnectedAfterMs: 60 * 60_000,
  gcAfterMs: 7 * 86_400_000,
  maxConcurrent: 1,
  integrationBranch: null,
  verifyTimeoutMs: 10 * 60_000,
  memoryBudget: 2000,
  reviewAllowSelf: false,
  loopMaxWorktrees: 2,
  loopMergeStrategy: "merge",
  loopAutoCleanup: true,
  stuckAfterMs: 60 * 60_000,
  maxClockSkewMs: 60_000,
};

export function resolveConfig(file: ConfigFile): Config {
  const claimTtlMs = file.claim_ttl ? parseDuration(file.claim_ttl, "claim_ttl in .handoff.yaml") : DEFAULT_CONFIG.claimTtlMs;
  const mode = file.mode ?? DEFAULT_CONFIG.mode;
  return {
    claimTtlMs,
    maxAttempts: file.max_attempts ?? DEFAULT_CONFIG.maxAttempts,
    retentionMs: file.retention ? parseDuration(file.retention, "retention in .handoff.yaml") : DEFAULT_CONFIG.retentionMs,
    mode,
    ignore: file.ignore ?? [],
    exclusiveScope: file.exclusive_scope ?? false,
    autoLease: file.auto_lease ?? mode === "advisory",
    leaseTtlMs: file.lease_ttl ? parseDuration(file.lease_ttl, "lease_ttl in .handoff.yaml") : claimTtlMs,
    heartbeatIntervalMs: file.heartbeat_interval ? parseDuration(file.heartbeat_interval, "heartbeat_interval in .handoff.yaml") : DEFAULT_CONFIG.heartbeatIntervalMs,
    staleAfterMs: file.stale_after ? parseDuration(file.stale_after, "stale_after in .handoff.yaml") : DEFAULT_CONFIG.staleAfterMs,
    disconnectedAfterMs: file.disconnected_after ? parseDuration(file.disconnected_after, "disconnected_after in .handoff.yaml") : DEFAULT_CONFIG.disconnectedAfterMs,
    gcAfterMs: file.gc_after ? parseDuration(file.gc_after, "gc_after in .handoff.yaml") : DEFAULT_CONFIG.gcAfterMs,
    maxConcurrent: file.max_concurrent ?? DEFAULT_CONFIG.maxConcurrent,
    integrationBranch: DEFAULT_CONFIG.integrationBranch,
    verifyTimeoutMs: file.verify_timeout ? parseDuration(file.verify_timeout, "verify_timeout in .handoff.yaml") : DEFAULT_CONFIG.verifyTimeoutMs,
    memoryBudget: file.memory_budget ?? DEFAULT_CONFIG.memoryBudget,
    reviewAllowSelf: file.review?.allow_self ?? false,
    loopMaxWorktrees: file.loop?.max_worktrees ?? DEFAULT_CONFIG.loopMaxWorktrees,
    loopMergeStrategy: file.loop?.merge_strategy ?? DEFAULT_CONFIG.loopMergeStrategy,
    loopAutoCleanup: file.loop?.auto_cleanup ?? DEFAULT_CONFIG.loopAutoCleanup,
    stuckAfterMs: file.stuck_after ? parseDuration(file.stuck_after, "stuck_after in .handoff.yaml") : DEFAULT_CONFIG.stuckAfterMs,
    maxClockSkewMs: file.max_clock_skew ? parseDuration(file.max_clock_skew, "max_clock_skew in .handoff.yaml") : DEFAULT_CONFIG.maxClockSkewMs,
  };
}
