// One deadline for a call that makes several exclusive writes (claim --next going from one
// candidate to the next): each write's remote budget ends where the first one's did, so the
// whole call is bounded as one exclusive operation is, however many races it loses. A caller may
// also set a shorter bound of its own (a waiter's cancel after it stopped waiting).
import type { SharedDeadline } from "../store/store.ts";
import type { RemoteBudget } from "./remote-budget.ts";

export function sharedBudget(budget: RemoteBudget, deadline: SharedDeadline | undefined): RemoteBudget {
  if (!deadline) return budget;
  deadline.until ??= budget.until;
  return { ...budget, until: Math.min(budget.until, deadline.until), ...(deadline.firm ? { firm: true } : {}) };
}
