// The few things the page may change, each the same store call as its CLI verb (so the event log
// records it like any other write): accept or reject a review, reclaim a stale claim, force-release
// a flagged lease. Anything else is refused before it reaches the store.
import { fail } from "../core/errors.ts";
import { validateAgentId, validateTaskId } from "../core/ids.ts";
import { MAX_REASON } from "../core/lease.ts";
import { accept, reject } from "../store/review-actions.ts";
import { reclaimLeasesFor } from "../store/lease-reclaim.ts";
import type { Store } from "../store/store.ts";
import { reclaim } from "../store/task-actions.ts";
import type { Snapshot } from "./snapshot.ts";

export interface ActionRequest {
  action: "accept" | "reject" | "reclaim" | "unlease";
  task?: string;
  pattern?: string;
  holder?: string;
  reason?: string;
  /** reclaim: the fence of the claim the page showed. */
  fence?: number;
  /** accept, reject: when the submission the page showed was made. */
  submitted_at?: string;
}

function text(v: unknown, what: string, required: boolean): string | undefined {
  // Blank text is no reason: refused where one is required, as the page refuses it.
  if (v === undefined || v === null || (typeof v === "string" && !v.trim())) {
    if (required) fail("usage", `${what} is required`);
    return undefined;
  }
  if (typeof v !== "string" || v.length > MAX_REASON) fail("invalid_input", `${what} must be text of at most ${MAX_REASON} characters`);
  return v;
}

/**
 * The submission a review decision is about: the page's (it sends the submitted_at it showed), else
 * the snapshot's; the store refuses a submission made since, so work handed in again between the
 * page's render and the click is not accepted or rejected unseen.
 */
function submissionSeen(req: Record<string, unknown>, id: string, current: Snapshot | null): string | undefined {
  const shown = current?.status.review.find((r) => r.task === id)?.submitted_at;
  if (req.submitted_at === undefined) return shown;
  if (typeof req.submitted_at !== "string" || req.submitted_at.length > 40) fail("invalid_input", "submitted_at must be the time the page showed");
  return req.submitted_at;
}

/** Runs one action; `current` is what the page was shown, to refuse reclaiming a claim that is not stale. */
export async function runAction(store: Store, body: unknown, current: Snapshot | null): Promise<{ done: string }> {
  const req = (body && typeof body === "object" ? body : {}) as Record<string, unknown>;
  switch (req.action) {
    case "accept": {
      const id = validateTaskId(text(req.task, "task", true)!);
      const t = await accept(store, id, text(req.reason, "reason", false) ?? null, { seen: submissionSeen(req, id, current) });
      return { done: `accepted ${t.id}` };
    }
    case "reject": {
      // The page asks for a reason before it sends a reject (docs/dashboard.md): so does the server.
      const id = validateTaskId(text(req.task, "task", true)!);
      const t = await reject(store, id, text(req.reason, "reason", true)!, { seen: submissionSeen(req, id, current) });
      return { done: `rejected ${t.id}` };
    }
    case "reclaim": {
      const id = validateTaskId(text(req.task, "task", true)!);
      const reason = text(req.reason, "reason", true)!;
      const card = current?.tasks.find((t) => t.id === id);
      if (!card?.stale || card.fence === null) fail("wrong_state", `the claim on ${id} is not stale: the dashboard reclaims only expired claims or claims of stale or gone agents (git handoff reclaim can force it)`);
      // The page's fence (when it sends one) and the snapshot's must be the claim as stored: a claim
      // granted after the snapshot judged the old one stale is live, and is refused in the store.
      const seen = req.fence === undefined ? card.fence : req.fence;
      if (seen !== card.fence) fail("wrong_state", `the claim on ${id} changed since the page showed it (fence ${String(seen)} then, ${card.fence} now): look again`);
      const t = await reclaim(store, id, reason, { fence: card.fence });
      return { done: `reclaimed ${t.id}` };
    }
    case "unlease": {
      const pattern = text(req.pattern, "pattern", true)!;
      const holder = text(req.holder, "holder", false);
      const r = await reclaimLeasesFor(store, [pattern], { reason: text(req.reason, "reason", true)!, ...(holder !== undefined ? { holder: validateAgentId(holder) } : {}) });
      return { done: r.released.map((l) => `released ${l.pattern} of ${l.agent}`).join("; ") };
    }
    default:
      fail("usage", `unknown action ${JSON.stringify(req.action)}: accept, reject, reclaim or unlease`);
  }
}
