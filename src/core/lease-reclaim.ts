// Force-releasing another agent's file lease: allowed only when the lease has outlived its reason
// (the task it served is finished, or its holder is gone), always with a reason, always logged.
import { flagLease, type AgentLike, type LeaseFlag } from "./lease-flags.ts";
import type { HandoffEvent } from "./event.ts";
import { isLeaseLiveFor, MAX_REASON, type Lease, type LeaseSet } from "./lease.ts";
import { refuse, type Outcome } from "./outcome.ts";
import type { OpContext } from "./task-ops.ts";
import type { Task } from "./task.ts";
import { handoffCommand } from "./shell-quote.ts";

export interface LeaseReclaimRequest {
  /** Patterns as leased. */
  patterns: string[];
  reason: string;
  /** Only this holder's leases on those patterns (default: every flagged holder). */
  holder?: string;
}

/** What the decision needs to know about the world beyond the lease set. */
export interface LeaseFacts {
  tasks: Map<string, Pick<Task, "id" | "status">>;
  agents: Map<string, AgentLike>;
}

export function reclaimLeases(set: LeaseSet, req: LeaseReclaimRequest, facts: LeaseFacts, ctx: OpContext): Outcome<LeaseSet> {
  const reason = req.reason.trim();
  if (!reason) return refuse({ code: "usage", message: "a forced release needs --reason TEXT" });
  if (reason.length > MAX_REASON) return refuse({ code: "invalid_input", message: `reason is ${reason.length} characters; at most ${MAX_REASON}` });
  if (!req.patterns.length) return refuse({ code: "invalid_input", message: "name the leased paths or globs to release" });
  const gone: { lease: Lease; flag: LeaseFlag }[] = [];
  for (const pattern of [...new Set(req.patterns)]) {
    // Another agent's lease inside the takeover grace is held as for any write, and listed so (the
    // dashboard's force release is offered on it): it can be reclaimed like a live one.
    const held = set.leases.filter((l) => l.pattern === pattern && isLeaseLiveFor(l, ctx.now, ctx.actor.agent, ctx.takeoverGraceMs) && (req.holder === undefined || l.agent === req.holder));
    if (!held.length) {
      return refuse({ code: "not_found", message: `no live lease on ${pattern}${req.holder ? ` held by ${req.holder}` : ""}`, data: { path: pattern } });
    }
    const flagged = held.map((lease) => ({ lease, flag: flagLease(lease, facts) })).filter((x): x is { lease: Lease; flag: LeaseFlag } => x.flag !== null);
    if (!flagged.length) {
      const l = held[0]!;
      return refuse({
        code: "wrong_state",
        message: `the lease on ${pattern} held by ${l.agent}${l.task ? ` for task ${l.task}` : ""} is still in use (its task is not finished and its holder is not gone): it cannot be force-released`,
        data: { path: pattern, holder: l.agent, task: l.task },
        suggestions: [{ action: "negotiate", detail: `ask ${l.agent} to release it: ${handoffCommand("ask", l.agent, "--release", pattern)}` }],
      });
    }
    gone.push(...flagged);
  }
  const record = { leases: set.leases.filter((l) => !gone.some((g) => g.lease === l)) };
  const { agent, scope, worktree, branch } = ctx.actor;
  const holders = [...new Set(gone.map((g) => g.lease.agent))];
  const tasks = [...new Set(gone.map((g) => g.lease.task).filter((t): t is string => !!t))];
  const event: HandoffEvent = {
    type: "lease_reclaimed",
    task: tasks.length === 1 ? tasks[0]! : "",
    agent,
    at: ctx.now.toISOString(),
    scope,
    worktree,
    branch,
    holder: holders.join(", "),
    paths: gone.map((g) => g.lease.pattern),
    reason: `${reason} (${[...new Set(gone.map((g) => g.flag.kind))].join(", ")})`,
  };
  return { ok: true, record, steps: [{ event, record }] };
}
