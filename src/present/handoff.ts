import type { InboxEntry } from "../core/handoff.ts";
import type { Handoff } from "../core/handoff-record.ts";
import { UNTRUSTED_LABEL } from "../core/untrusted.ts";

/** JSON for agents: the producer's free text grouped under `untrusted`, with the notice. */
export function handoffJson(h: Handoff): Record<string, unknown> {
  const { contract, verify, note, questions, ...rest } = h;
  return { ...rest, untrusted: { notice: UNTRUSTED_LABEL, from: h.producer, contract, verify, note, questions } };
}

export function entryJson(e: InboxEntry): Record<string, unknown> {
  return { ...handoffJson(e.handoff), reason: e.reason, via: e.via, task_status: e.task_status };
}

