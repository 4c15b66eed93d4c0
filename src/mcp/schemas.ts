// Output schemas of the MCP tools. Records reuse the core schemas (one schema per record); views
// that exist only here (overview, error body) are defined once below.
import * as z from "zod/mini";
import { HandoffEvent } from "../core/event.ts";
import { Actor, AgentScope } from "../core/identity.ts";
import { lazySchema } from "../core/schema-helpers.ts";
import { Task } from "../core/task.ts";

export { HandoffEvent, Task };

/**
 * A task as views show it: `newer_on_remote` when the remote holds it from a newer git-handoff
 * (present/newer-note.ts); `grace_until` on another agent's claim that stands for the takeover grace (core/task-view.ts).
 */
export const ShownTask = lazySchema(() => z.extend(Task, { newer_on_remote: z.optional(z.literal(true)), grace_until: z.optional(z.string()) }));

export const Suggestion = z.object({ action: z.string(), detail: z.string() });

/** A tool call that makes sense after this result (structuredContent.next). */
export const NextCall = z.object({ tool: z.string(), arguments: z.optional(z.record(z.string(), z.unknown())), why: z.string() });

/** The CLI's `--json` error body (src/cli/output.ts errorBody). */
export const ErrorBody = z.object({
  code: z.string(),
  message: z.string(),
  recoverable: z.boolean(),
  data: z.record(z.string(), z.unknown()),
  suggestions: z.array(Suggestion),
});

const HeldTask = z.object({
  task: z.string(),
  objective: z.string(),
  agent: z.string(),
  expires_at: z.string(),
  expires_in_ms: z.number(),
  fence: z.number(),
  worktree: z.nullable(z.string()),
  branch: z.nullable(z.string()),
  scope: AgentScope,
  /** The task is held back as newer (present/newer-note.ts markOverview). */
  newer_on_remote: z.optional(z.literal(true)),
  /** Another agent's claim expired by this clock that stands for the takeover grace until then (core/overview.ts). */
  grace_until: z.optional(z.string()),
});

export const OverviewShape = {
  at: z.string(),
  counts: z.record(z.string(), z.number()),
  holders: z.array(z.object({ agent: z.string(), tasks: z.array(HeldTask) })),
  expiring_soon: z.array(HeldTask),
  expired: z.array(HeldTask),
  me: Actor,
  problems: z.array(z.string()),
};
export const Overview = z.object(OverviewShape);

export type Shape = Record<string, z.core.$ZodType>;

/**
 * The advertised output schema of a tool: `summary` (always), `next` (where it helps), then its
 * success fields, or `error` on a refusal. Every other field is optional because the SDK 1.32 client validates structuredContent against the output
 * schema even when isError is set (typescript-sdk#1943): a strict success-only schema would turn
 * every refusal into a client-side validation failure and hide the holder from the agent.
 */
export function envelope(shape: Shape): z.ZodMiniObject {
  // notices: what the CLI says on stderr beside a result (a committed policy that does not parse, a
  // worktree's policy file set aside, a lost push report found landed).
  const fields: Shape = { summary: z.string(), next: z.optional(z.array(NextCall)), notices: z.optional(z.array(z.string())) };
  for (const [k, v] of Object.entries(shape)) fields[k] = z.optional(v);
  fields.error = z.optional(ErrorBody);
  return z.object(fields);
}
