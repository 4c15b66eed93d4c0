// A view asks each claim's expiry several times (settling, the held and expiring lists, the
// roster's live claims, stuck claims): at 10,000 tasks that was 25,000 `Date.parse` of the same
// strings. Parsed once per view instead, by each task's place in the listing the view reads.
import type { ViewTask } from "./view-task.ts";

/** Each task's claim expiry (ms) where it is stored as claimed with a claim, else NaN (never live: NaN compares false). */
export function claimExpiries(tasks: readonly ViewTask[]): Float64Array {
  const out = new Float64Array(tasks.length).fill(NaN);
  for (let i = 0; i < tasks.length; i++) {
    const t = tasks[i]!;
    if (t.status === "claimed" && t.claim) out[i] = Date.parse(t.claim.expires_at);
  }
  return out;
}
