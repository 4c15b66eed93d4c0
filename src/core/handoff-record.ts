import * as z from "zod/mini";
import { DiffSummary } from "./diff-summary.ts";
import { boundedText, isoTime, lazySchema } from "./schema-helpers.ts";
import { objectId } from "./object-id.ts";

export const MAX_HANDOFF_TEXT = 4000;
export const MAX_QUESTIONS = 20;

export const Ack = lazySchema(() => z.object({ agent: z.string(), at: isoTime() }));
export type Ack = z.infer<typeof Ack>;

/**
 * A structured handoff from the agent that produced a result to the one that consumes it: the
 * commit, what changed (diff summary), the contract that changed, how to verify, open questions.
 * Its id is `<task>#<n>`: readable, and it names the task ref that stores it.
 */
export const Handoff = lazySchema(() =>
  z.object({
    id: z.string(),
    task: z.string(),
    producer: z.string(),
    /** The consumer agent, or null for whoever claims a task that depends on this one. */
    to: z.nullable(z.string()),
    commit: z.nullable(objectId()),
    diff: z.nullable(DiffSummary),
    contract: z.nullable(boundedText(MAX_HANDOFF_TEXT)),
    verify: z.nullable(boundedText(MAX_HANDOFF_TEXT)),
    questions: z.array(boundedText(MAX_HANDOFF_TEXT)),
    note: z.nullable(boundedText(MAX_HANDOFF_TEXT)),
    created_at: isoTime(),
    /** Agents that acknowledged it; it leaves their inbox then, so it is delivered once. */
    acked_by: z.array(Ack),
    /**
     * Stored with the record so every JSON view of a task (task show, MCP get_task) carries it: the
     * free-text fields were written by another agent.
     */
    notice: z.optional(z.string()),
  }),
);
export type Handoff = z.infer<typeof Handoff>;
