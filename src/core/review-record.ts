import * as z from "zod/mini";
import { DiffSummary } from "./diff-summary.ts";
import { boundedText, count, isoTime, lazySchema } from "./schema-helpers.ts";
import { objectId } from "./object-id.ts";

/** Bytes of verification output kept: the tail, where test runners print their verdict. */
export const MAX_OUTPUT_TAIL = 4000;
export const MAX_COMMAND = 2000;

/** One run of a task's verification command in the agent's worktree. */
export const Verification = lazySchema(() =>
  z.object({
    command: boundedText(MAX_COMMAND),
    cwd: z.string(),
    exit_code: z.nullable(z.int()),
    signal: z.nullable(z.string()),
    timed_out: z.boolean(),
    passed: z.boolean(),
    duration_ms: count(),
    /** The last MAX_OUTPUT_TAIL characters of stdout and stderr, interleaved as produced. */
    output_tail: boundedText(MAX_OUTPUT_TAIL + 200),
    /** How many bytes of output came before the tail and were dropped (0: the whole output). */
    truncated_bytes: count(),
    at: isoTime(),
    /** Paths with uncommitted changes in the worktree when it ran: tested, but not in `commit`. */
    uncommitted: z.optional(count()),
  }),
);
export type Verification = z.infer<typeof Verification>;

export const ReviewDecision = lazySchema(() =>
  z.object({
    verdict: z.enum(["accepted", "rejected"]),
    by: z.string(),
    at: isoTime(),
    reason: z.nullable(boundedText(8000)),
  }),
);
export type ReviewDecision = z.infer<typeof ReviewDecision>;

/** The last submission for review: who, what commit, what changed, the verification, the verdict. */
export const Review = lazySchema(() =>
  z.object({
    submitted_by: z.string(),
    submitted_at: isoTime(),
    commit: z.nullable(objectId()),
    diff: z.nullable(DiffSummary),
    verification: z.nullable(Verification),
    decision: z.nullable(ReviewDecision),
  }),
);
export type Review = z.infer<typeof Review>;
