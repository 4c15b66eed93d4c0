// How a receive check says no: it throws, and validateReceived (validate-receive.ts) turns the
// throw into the verdict of the ref, with the commit it was judging. `newer` is data this build
// cannot read yet (held back, not hostile); `invalid` is what no git-handoff writes.
import { HISTORY_SKEW_MS } from "../core/clock-skew.ts";

/** How far ahead of this clone's clock a received time may be, and an event behind its parent's. */
export const CLOCK_SKEW_MS = HISTORY_SKEW_MS;

export class Refusal extends Error {
  constructor(
    readonly kind: "invalid" | "newer",
    reason: string,
  ) {
    super(reason);
  }
}

export const invalid = (reason: string): never => {
  throw new Refusal("invalid", reason);
};
