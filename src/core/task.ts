import * as z from "zod/mini";
import { AgentScope } from "./identity.ts";
import { boundedText, count, isoTime, lazySchema } from "./schema-helpers.ts";
import { objectId } from "./object-id.ts";
import { Handoff } from "./handoff-record.ts";
import { Review } from "./review-record.ts";
import { Address } from "./address.ts";

export const MAX_OBJECTIVE = 4000;
export const MAX_NOTE = 8000;
export const MAX_SCOPE_GLOBS = 100;

/** `review`: verified work waiting for a reviewer to accept (-> done) or reject (-> todo). */
/** Every task status, for readers that must not build the schema (a cold command's caches). */
export const TASK_STATUSES = ["todo", "claimed", "done", "failed", "cancelled", "review"] as const;
export const TaskStatus = lazySchema(() => z.enum(TASK_STATUSES));
export type TaskStatus = z.infer<typeof TaskStatus>;
export const FINAL_STATUSES: readonly TaskStatus[] = ["done", "failed", "cancelled"];

/** A grant of the task to one agent until `expires_at`. */
export const Claim = lazySchema(() =>
  z.object({
    agent: z.string(),
    claimed_at: isoTime(),
    expires_at: isoTime(),
    /** Goes up at every grant of this task: work stamped with an older fence is stale. */
    fence: count(),
    ttl_ms: count(),
    worktree: z.nullable(z.string()),
    branch: z.nullable(z.string()),
    scope: AgentScope,
  }),
);
export type Claim = z.infer<typeof Claim>;

export const Reclaimed = lazySchema(() => z.object({ agent: z.string(), fence: count(), by: z.string(), at: isoTime() }));
export type Reclaimed = z.infer<typeof Reclaimed>;

export const TaskResult = lazySchema(() =>
  z.object({
    commit: z.optional(objectId()),
    note: z.optional(boundedText(MAX_NOTE)),
    reason: z.optional(boundedText(MAX_NOTE)),
    /**
     * The commit of refs/handoff/results/<id> this completion sent (handover): the one result a
     * reader takes, whatever the results ref holds since (anyone can push a commit onto it).
     */
    results: z.optional(objectId()),
  }),
);
export type TaskResult = z.infer<typeof TaskResult>;

export const Task = lazySchema(() =>
  z.object({
    id: z.string(),
    objective: boundedText(MAX_OBJECTIVE),
    status: TaskStatus,
    priority: z.int(),
    scope: z.array(z.string()),
    claim: z.nullable(Claim),
    /** Grants that expired without completion. At `max_attempts` the task fails. */
    attempts: count(),
    max_attempts: count(),
    /** The highest fencing number ever granted, kept across releases so fences only go up. */
    fence: count(),
    created_by: z.string(),
    created_at: isoTime(),
    updated_at: isoTime(),
    result: z.nullable(TaskResult),
    /** Claiming it leases its scope exclusively (else shared, unless exclusive_scope in .handoff.yaml). */
    exclusive: z.optional(z.boolean()),
    // Issue 4 fields are optional so records written before them stay readable (read with ?? []).
    /** Ids of the tasks this one waits on: it is ready only once all of them are done. */
    after: z.optional(z.array(z.string())),
    /** The command that verifies the work (`done` runs it and sends the task to review). */
    // One line of shell: a record written by hand with a newline would otherwise run two commands.
    verify: z.optional(z.nullable(boundedText(MAX_NOTE).check(z.regex(/^[^\x00-\x08\x0a-\x1f\x7f-\x9f]*$/, "expected one line without control characters")))),
    /** HEAD of the claimer's worktree when the task was last claimed: the base of its diff. */
    base: z.optional(z.nullable(objectId())),
    /** Structured handoffs from the producer to whoever consumes the result. */
    handoffs: z.optional(z.array(Handoff)),
    /** The last verification and review decision. */
    review: z.optional(z.nullable(Review)),
    /** Who may take it (address.ts); absent: anyone. */
    to: z.optional(z.nullable(Address)),
    /**
     * The last grant taken away by `reclaim`: its holder may not finish the task unless it claims
     * it again (a grant since, with a higher fence, makes it history).
     */
    reclaimed: z.optional(z.nullable(Reclaimed)),
  }),
);
export type Task = z.infer<typeof Task>;

export function isFinal(status: TaskStatus): boolean {
  return FINAL_STATUSES.includes(status);
}
