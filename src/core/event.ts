import * as z from "zod/mini";
import { oneLine } from "./one-line.ts";
import { AgentScope } from "./identity.ts";
import { isoTime, lazySchema } from "./schema-helpers.ts";

/** Every event type, for readers that must not build the schema (a cold `events`: its help and its check of --type). */
export const EVENT_TYPES = [
  "created",
  "claimed",
  "renewed",
  "released",
  "expired",
  "done",
  "failed",
  "reclaimed",
  "cancelled",
  "leased",
  "unleased",
  "lease_expired",
  // agents, dependencies, handoffs, review
  "session_started",
  "session_ended",
  "heartbeat",
  "agent_gc",
  "depended",
  "undepended",
  "handoff",
  "acked",
  "verified",
  "submitted",
  "accepted",
  "rejected",
  // what coordination caught, on the catcher's log ref (refs/handoff/log/<agent>)
  "claim_refused",
  "hook_caught",
  "conflict_found",
  // shared memories and documents (refs/handoff/memories/<id>, refs/handoff/docs/<name>)
  "memory_added",
  "memory_edited",
  "memory_removed",
  "doc_put",
  // a claim whose scope meets other live work (advisory, never a block)
  "claim_overlap",
  // a ref from the sync remote refused on receive (src/sync/validate-receive.ts)
  "received_invalid",
  // a forced release of a lease whose task is finished or whose holder is gone
  "lease_reclaimed",
  // the session loop's record changed (refs/handoff/loop): `note` says how
  "loop",
  // drift from the declaration, and negotiation (release requests), on each agent's log ref
  "undeclared_edit",
  "release_requested",
  "release_answered",
  "request_delivered",
] as const;
export const EventType = lazySchema(() => z.enum(EVENT_TYPES));
export type EventType = z.infer<typeof EventType>;

/**
 * One change to one entity. It is the body of the commit that makes the change, so the event log
 * is read from history and never written twice. `agent` is whom the event is about (for `expired`,
 * the holder whose lease ran out); `by` is who recorded it when that differs.
 */
export const HandoffEvent = lazySchema(() =>
  z.object({
    type: EventType,
    task: z.string(),
    agent: z.string(),
    at: isoTime(),
    scope: AgentScope,
    worktree: z.nullable(z.string()),
    branch: z.nullable(z.string()),
    by: z.optional(z.string()),
    fence: z.optional(z.int()),
    expires_at: z.optional(isoTime()),
    reason: z.optional(z.string()),
    commit: z.optional(z.string()),
    note: z.optional(z.string()),
    holder: z.optional(z.string()),
    objective: z.optional(z.string()),
    /** File leases: the paths or globs the event is about. */
    paths: z.optional(z.array(z.string())),
    exclusive: z.optional(z.boolean()),
    // agents, dependencies, handoffs, review
    session: z.optional(z.nullable(z.string())),
    /** depended / undepended: the task waited on. */
    on: z.optional(z.string()),
    handoff: z.optional(z.string()),
    to: z.optional(z.nullable(z.string())),
    exit_code: z.optional(z.nullable(z.int())),
    passed: z.optional(z.boolean()),
    duration_ms: z.optional(z.int()),
    last_heartbeat: z.optional(isoTime()),
    // what coordination caught
    /** created: the tasks it waits on from the start (task add --after). */
    after: z.optional(z.array(z.string())),
    /**
     * created: the commit of refs/handoff/inputs/<id> the task was created with, null for none.
     * Absent on tasks made by builds before it (their inputs are read unverified).
     */
    inputs: z.optional(z.nullable(z.string())),
    /** done / failed: the commit of refs/handoff/results/<id> the completion sent. */
    results: z.optional(z.string()),
    /** claim_refused: the refusal's code (held_by_other, blocked, ...). */
    code: z.optional(z.string()),
    /** hook_caught: which hook, and its worst answer. */
    hook: z.optional(z.string()),
    verdict: z.optional(z.enum(["deny", "warn", "info"])),
    /** conflict_found: the two branches and the commits merged in memory. */
    branches: z.optional(z.array(z.string())),
    commits: z.optional(z.array(z.string())),
    /** memory_*: which memory; doc_put: which document and how large the version is. */
    memory: z.optional(z.string()),
    doc: z.optional(z.string()),
    bytes: z.optional(z.int()),
    /** release_*, request_delivered: which request; release_answered: the verdict and how long it keeps. */
    request: z.optional(z.string()),
    answer: z.optional(z.enum(["release", "keep"])),
    until: z.optional(isoTime()),
  }),
);
export type HandoffEvent = z.infer<typeof HandoffEvent>;

/** What an event is about, in a few words: its task, else its paths (a lease without a task), else its handoff or request. */
export function subjectOf(e: HandoffEvent): string {
  if (e.task) return e.task;
  if (e.paths?.length) return pathList(e.paths);
  return e.handoff ?? e.request ?? "(nothing named)";
}

/** The operation an event records, as a noun ("claim of api", "lease of docs/**"), for reports of operations. */
const OPERATIONS: Partial<Record<EventType, string>> = {
  created: "creation",
  claimed: "claim",
  renewed: "renewal",
  released: "release",
  expired: "expiry",
  done: "completion",
  failed: "failure",
  reclaimed: "reclaim",
  cancelled: "cancellation",
  leased: "lease",
  unleased: "unlease",
  lease_expired: "lease expiry",
  lease_reclaimed: "lease reclaim",
  depended: "dependency",
  undepended: "dependency removal",
  handoff: "handoff",
  acked: "acknowledgement",
  verified: "verification",
  submitted: "submission for review",
  accepted: "acceptance",
  rejected: "rejection",
  release_requested: "release request",
  release_answered: "answer",
};

export function operationName(type: EventType): string {
  return OPERATIONS[type] ?? `${type} event`;
}

/** The one-line summary that heads the event's commit, for `git log --oneline`. */
export function summarize(e: HandoffEvent): string {
  switch (e.type) {
    case "created":
      return `created ${e.task}: ${short(e.objective ?? "")}`;
    case "claimed":
      return `claimed ${e.task} by ${e.agent} (fence ${e.fence}, until ${e.expires_at})`;
    case "renewed":
      return `renewed ${e.task} by ${e.agent} (until ${e.expires_at})`;
    case "released":
      return `released ${e.task} by ${e.agent}`;
    case "expired":
      return `expired ${e.task}: lease of ${e.agent} ran out${e.by && e.by !== e.agent ? ` (seen by ${e.by})` : ""}`;
    case "done":
      return `done ${e.task} by ${e.agent}${e.commit ? ` at ${e.commit.slice(0, 12)}` : ""}`;
    case "failed":
      return `failed ${e.task}: ${short(e.reason ?? "")}`;
    case "reclaimed":
      return `reclaimed ${e.task} from ${e.holder} by ${e.agent}: ${short(e.reason ?? "")}`;
    case "cancelled":
      return `cancelled ${e.task} by ${e.agent}: ${short(e.reason ?? "")}`;
    case "leased":
      return `leased ${pathList(e.paths)} to ${e.agent}${e.exclusive ? " (exclusive)" : ""}${e.task ? ` for ${e.task}` : ""} until ${e.expires_at}`;
    case "unleased":
      return `unleased ${pathList(e.paths)} by ${e.agent}${e.task ? ` (${e.task})` : ""}`;
    case "lease_expired":
      return `lease_expired ${pathList(e.paths)}: lease of ${e.agent} ran out${e.by && e.by !== e.agent ? ` (seen by ${e.by})` : ""}`;
    case "session_started":
      return `session started by ${e.agent}: ${short(e.objective ?? "")}`;
    case "session_ended":
      return `session ended by ${e.agent}`;
    case "heartbeat":
      return `heartbeat of ${e.agent}`;
    case "agent_gc":
      return e.task
        ? `released ${e.task}: agent ${e.holder ?? e.agent} silent since ${e.last_heartbeat}`
        : `removed agent ${e.agent}: silent since ${e.last_heartbeat}`;
    case "depended":
      return `${e.task} now waits on ${e.on}`;
    case "undepended":
      return `${e.task} no longer waits on ${e.on}`;
    case "handoff":
      return `handoff ${e.handoff} from ${e.agent}${e.to ? ` to ${e.to}` : ""}${e.commit ? ` at ${e.commit.slice(0, 12)}` : ""}`;
    case "acked":
      return `acked ${e.handoff} by ${e.agent}`;
    case "verified":
      return `verification of ${e.task} ${e.passed ? "passed" : "failed"} (exit ${e.exit_code ?? "none"}) for ${e.agent}`;
    case "submitted":
      return `submitted ${e.task} for review by ${e.agent}${e.commit ? ` at ${e.commit.slice(0, 12)}` : ""}`;
    case "accepted":
      return `accepted ${e.task} by ${e.agent}`;
    case "rejected":
      return `rejected ${e.task} by ${e.agent}: ${short(e.reason ?? "")}`;
    case "claim_refused":
      return `claim of ${e.task} by ${e.agent} refused (${e.code ?? "refused"}${e.holder ? `, held by ${e.holder}` : ""})`;
    case "hook_caught":
      return `${e.hook ?? "hook"} ${e.verdict ?? "caught"} for ${e.agent}: ${pathList(e.paths)}${e.holder ? ` (leased by ${e.holder})` : ""}`;
    case "lease_reclaimed":
      return `lease_reclaimed ${pathList(e.paths)} from ${e.holder} by ${e.agent}: ${short(e.reason ?? "")}`;
    case "conflict_found":
      return `conflict predicted between ${(e.branches ?? []).join(" and ")}: ${pathList(e.paths)}`;
    case "memory_added":
      return `memory ${e.memory} added by ${e.agent}${e.task ? ` for ${e.task}` : ""}: ${short(e.note ?? "")}`;
    case "memory_edited":
      return `memory ${e.memory} edited by ${e.agent}`;
    case "memory_removed":
      return `memory ${e.memory} removed by ${e.agent}`;
    case "doc_put":
      return `document ${e.doc} updated by ${e.agent} (${e.bytes ?? 0} bytes)`;
    case "claim_overlap":
      return `${e.code ?? "info"}: claim of ${e.task} by ${e.agent} overlaps ${pathList(e.paths)} of ${e.holder ?? "another agent"}${e.on ? ` (task ${e.on})` : ""}`;
    case "received_invalid":
      return `refused on receive (seen by ${e.agent}): ${short(e.reason ?? "")}`;
    case "loop":
      return `loop: ${short(e.note ?? "")}`;
    case "undeclared_edit":
      return `${e.agent} touched ${pathList(e.paths)} outside its declaration`;
    case "release_requested":
      return `${e.agent} asks ${e.holder} to release ${e.task ? `task ${e.task}` : pathList(e.paths)} (${e.request})`;
    case "release_answered":
      return `${e.agent} answers ${e.request} of ${e.holder}: ${e.answer}${e.until ? ` until ${e.until}` : ""}`;
    case "request_delivered":
      return `${e.request} (${e.note}) delivered to ${e.agent}`;
  }
}

/** A summary's text part: its first line, cut to fit a commit subject. */
const short = (s: string) => oneLine(s, 72);

function pathList(paths: string[] | undefined): string {
  const p = paths ?? [];
  return short(p.length > 3 ? `${p.slice(0, 3).join(" ")} +${p.length - 3} more` : p.join(" "));
}

