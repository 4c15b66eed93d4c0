import type { InboxEntry } from "../core/handoff.ts";
import type { Handoff } from "../core/handoff-record.ts";
import type { Rejection } from "../core/rejection-inbox.ts";
import type { ReleaseRequest } from "../core/release-request.ts";
import { UNTRUSTED_LABEL } from "../core/untrusted.ts";

/** JSON for agents: the producer's free text grouped under `untrusted`, with the notice. */
export function handoffJson(h: Handoff): Record<string, unknown> {
  const { contract, verify, note, questions, ...rest } = h;
  return { ...rest, untrusted: { notice: UNTRUSTED_LABEL, from: h.producer, contract, verify, note, questions } };
}

/** A handoff as an inbox item: `kind: "handoff"`, as every other item names its kind. */
export function entryJson(e: InboxEntry): Record<string, unknown> {
  return { kind: "handoff", ...handoffJson(e.handoff), reason: e.reason, via: e.via, task_status: e.task_status };
}

/**
 * The inbox in JSON, each item with its `kind`: `rejection` (a review of the caller's work was
 * rejected), `release_request` (waits for its answer), `release_answer` (to its own request),
 * `handoff`. The CLI prints them as one array in this order; MCP's inbox tool by group.
 */
export function inboxJson(p: { rejections: Rejection[]; asked: ReleaseRequest[]; answered: ReleaseRequest[]; entries: InboxEntry[] }) {
  return {
    rejections: p.rejections.map((r) => ({ ...r, kind: "rejection" as const })),
    requests: [...p.asked.map((r) => ({ kind: "release_request" as const, ...r })), ...p.answered.map((r) => ({ kind: "release_answer" as const, ...r }))],
    entries: p.entries.map(entryJson),
  };
}

