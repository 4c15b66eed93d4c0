// The pre-push fencing check: work for a task may be pushed only by the agent holding its lease,
// and, when the work names the grant it was done under, only under that grant's fencing number.
import type { Refusal, Suggestion } from "./errors.ts";
import { formatDuration } from "./duration.ts";
import { isFinal, type Task } from "./task.ts";
import { settle } from "./task-ops.ts";
import type { Actor } from "./identity.ts";
import { handoffCommand } from "./shell-quote.ts";

export function fenceRefusal(stored: Task, pusher: Actor, now: Date, fence?: number): Refusal | null {
  const task = settle(stored, { actor: pusher, now }).record;
  const claim = task.claim;
  const theirs = stored.claim;
  if (!claim) {
    const why =
      theirs && theirs.agent === pusher.agent
        ? `your lease (fence ${theirs.fence}) expired ${formatDuration(now.getTime() - Date.parse(theirs.expires_at))} ago`
        : `nobody holds it (status ${task.status})`;
    return {
      code: "not_holder",
      message: `push refused: ${pusher.agent} does not hold task ${task.id}: ${why}`,
      data: { task: task.id, status: task.status, holder: null, fence: task.fence },
      suggestions: [unheldSuggestion(task)],
    };
  }
  if (claim.agent !== pusher.agent) {
    return {
      code: "held_by_other",
      message: `push refused: task ${task.id} is now held by ${claim.agent} (fence ${claim.fence}, until ${claim.expires_at}), not ${pusher.agent}`,
      data: { task: task.id, holder: claim.agent, fence: claim.fence, expires_at: claim.expires_at },
      suggestions: [
        { action: "negotiate", detail: `ask ${claim.agent} for it before pushing work for ${task.id}: ${handoffCommand("ask", claim.agent, "--release", task.id)}` },
        { action: "work_elsewhere", detail: "take other work: git handoff claim --next" },
      ],
    };
  }
  if (fence !== undefined && fence !== claim.fence) {
    return {
      code: "not_holder",
      // A fence above the current grant was never granted here: a typo, or a grant this clone has not seen yet.
      message:
        fence < claim.fence
          ? `push refused: fence ${fence} for task ${task.id} is stale; the current grant is fence ${claim.fence}`
          : `push refused: fence ${fence} for task ${task.id} was never granted here; the current grant is fence ${claim.fence} (sync first if another clone granted it)`,
      data: { task: task.id, holder: claim.agent, fence: claim.fence, stale_fence: fence },
      suggestions: [{ action: "retry", detail: "check the work against the current grant, then push with its fence" }],
    };
  }
  return null;
}

/** What to do about work for a task nobody holds: claim it again, unless it can no longer be claimed. */
function unheldSuggestion(task: Task): Suggestion {
  if (isFinal(task.status)) {
    return { action: "work_elsewhere", detail: `task ${task.id} is ${task.status}: its work is finished, there is nothing to push for it (new work needs a task of its own: git handoff task add)` };
  }
  if (task.status === "review") {
    return { action: "wait", detail: `task ${task.id} awaits review: nothing more is pushed for it unless a reviewer rejects it, which makes it claimable again` };
  }
  return { action: "retry", detail: `claim it again before pushing: ${handoffCommand("claim", task.id)}` };
}
