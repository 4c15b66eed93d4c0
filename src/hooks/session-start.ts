// What an agent should know when its session starts: the tasks it holds, the leases other agents
// hold in its scope (the scope globs of its tasks and its own leases; everything if none), its
// operations refused at sync, and the handoffs waiting for it. Another agent's lease expired by
// this clock that stands for the takeover grace (clock skew) is held as far as a write is concerned:
// listed, with how long it stands.
import { expiryOf, isLeaseLive, isLeaseLiveFor, type Lease } from "../core/lease.ts";
import { overlapWitness } from "../core/glob-overlap.ts";
import { BUDGET_NOTE, newMatchBudget, SPENT, withinBudget } from "../core/match-budget.ts";
import { formatDuration } from "../core/duration.ts";
import { viewGraceMs } from "../store/check-context.ts";
import { loadLeases } from "../store/lease-store.ts";
import type { Store } from "../store/store.ts";
import { listTasks } from "../store/task-store.ts";
import { inboxContext, rejectionsContext } from "../present/handoff-text.ts";
import { inbox } from "../store/handoff-actions.ts";
import { readConflicts } from "../sync/local-area.ts";
import { contextMemories } from "../store/memory-store.ts";
import { memoriesContext } from "../present/render-memories.ts";
import { deliver } from "../store/release-requests.ts";
import { requestsContext } from "../present/render-requests.ts";

const MAX_LINES = 30;

export async function sessionContext(store: Store): Promise<string> {
  const now = store.now();
  const agent = store.actor.agent;
  const { tasks } = await listTasks(store);
  const mine = tasks.filter((t) => t.status === "claimed" && t.claim?.agent === agent);
  const { set } = await loadLeases(store);
  const grace = await viewGraceMs(store);
  // The caller's own leases count until they expire; other agents' through the grace (isLeaseLiveFor).
  const live = set.leases.filter((l) => isLeaseLiveFor(l, now, agent, grace));
  const scope = [...mine.flatMap((t) => t.scope), ...live.filter((l) => l.agent === agent).map((l) => l.pattern)];
  // Within a local check's budget of matching: past it, a lease not looked at is listed all the same
  // (it may be in the scope), as a check answers what it did not look at.
  const work = newMatchBudget();
  let unchecked = 0;
  const near = (g: string, l: Lease) => {
    const witness = withinBudget(() => overlapWitness(g, l.pattern, work));
    if (witness === SPENT) unchecked++;
    return witness !== null;
  };
  const others = live.filter((l) => l.agent !== agent && (scope.length === 0 || scope.some((g) => near(g, l))));
  const lines = [`git-handoff: you are agent ${agent} (${store.actor.scope}${store.actor.branch ? `, branch ${store.actor.branch}` : ""}).`];
  if (mine.length) {
    lines.push("Your claimed tasks:");
    for (const t of mine) {
      lines.push(`- ${t.id}: ${t.objective.split("\n")[0]} (lease until ${t.claim!.expires_at}${t.scope.length ? `; scope ${t.scope.join(" ")}` : ""})`);
    }
  } else lines.push("You hold no task. Take one with: git handoff claim --next");
  if (others.length) {
    lines.push(scope.length ? "Files other agents hold in your scope:" : "Files other agents hold:");
    for (const l of others.slice(0, MAX_LINES)) {
      const left = expiryOf(l) - now.getTime();
      const until = isLeaseLive(l, now)
        ? `${formatDuration(left)} left`
        : `expired ${formatDuration(-left)} ago by this clock, stands for the takeover grace (clock skew) for ${formatDuration(left + grace)} more`;
      lines.push(`- ${l.pattern}: ${l.exclusive ? "EXCLUSIVE, do not edit" : "shared, coordinate before editing"} (${l.agent}${l.task ? `, task ${l.task}` : ""}, ${until})`);
    }
    if (others.length > MAX_LINES) lines.push(`- … and ${others.length - MAX_LINES} more: git handoff leases`);
    if (unchecked) lines.push(`(some of these may not be in your scope: ${BUDGET_NOTE})`);
  }
  lines.push("Before editing a file another agent holds, run: git handoff check <path>");
  // Operations of this agent that another clone's state refused at sync.
  const conflicts = await readConflicts(store, agent).catch(() => []);
  if (conflicts.length) {
    lines.push(`Refused at sync (${conflicts.length}; clear with git handoff sync-conflicts --ack):`);
    for (const c of conflicts.slice(0, 10)) lines.push(`- ${c.message}`);
  }
  // Handoffs waiting for this agent; their text is another agent's and is fenced as untrusted.
  const waiting = await inbox(store, agent).catch(() => ({ entries: [], rejections: [] }));
  const rejected = rejectionsContext(agent, waiting.rejections);
  if (rejected) lines.push("", rejected);
  const context = inboxContext(agent, waiting.entries);
  if (context) lines.push("", context);
  // Release requests for this agent (and answers to its own) not yet told at a session start.
  const asked = requestsContext(agent, await deliver(store, "session").catch(() => ({ requests: [], answers: [] })));
  if (asked) lines.push("", asked);
  // Shared memories within the policy's budget, fenced like every other agent's words.
  const memories = await contextMemories(store, mine.map((t) => t.id)).catch(() => ({ shown: [], omitted: 0 }));
  const remembered = memoriesContext(memories.shown, memories.omitted, agent);
  if (remembered) lines.push("", remembered);
  return lines.join("\n");
}
