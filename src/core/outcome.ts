import type { Refusal } from "./errors.ts";
import type { HandoffEvent } from "./event.ts";

/** One commit to write: the event and the record as it stands after it. */
export interface Step<T> {
  event: HandoffEvent;
  record: T;
}

/** What a pure operation returns: the steps that get from the old record to the new, or why not. */
export type Outcome<T> = { ok: true; record: T; steps: Step<T>[] } | { ok: false; refusal: Refusal };

export function refuse<T>(refusal: Refusal): Outcome<T> {
  return { ok: false, refusal };
}
