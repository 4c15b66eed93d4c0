// Every failure the tool reports is a value with a stable code. Front ends map the code to an
// exit status (CLI) or an `isError` result (MCP) through one table, never by reading prose.

export type ErrorCode =
  | "usage" // the command line itself is wrong
  | "invalid_input" // an id, duration, path, payload or config that we refuse to act on
  | "corrupt_state" // a ref under refs/handoff/ that does not hold what we wrote, or .git/handoff that is not a folder
  | "not_a_repo" // not inside a git repository (or -C names none)
  | "not_found" // no such task, agent, request, remote or file
  | "held_by_other" // another agent holds a live claim or lease
  | "clock_skew" // this clone's clock is known to be off by more than max_clock_skew
  | "not_holder" // the caller is not the holder it claims to be
  | "final_state" // the task is done, failed or cancelled
  | "no_task_ready" // claim --next found nothing to take
  | "lost_race" // compare-and-swap kept failing after bounded retries
  | "exists" // create-only write found the entity already there
  | "blocked" // the task waits on tasks that are not done yet
  | "cycle" // a dependency would close a cycle
  | "verification_failed" // the task's verification command did not pass
  | "wrong_state" // the task is not in the state the operation needs (e.g. review accept on a todo task)
  | "remote_unreachable" // the sync remote could not be reached for an exclusive write
  | "conflict" // an operation replayed at sync no longer applies on the remote's state
  | "at_capacity" // the agent already holds as many tasks as its capacity allows
  | "self_review" // an author accepting its own review, or a producer acking its own handoff
  | "unapproved_command" // a stored command (a task's verify) nobody in this clone approved; worker --once: the only tasks it could take have one
  | "quarantined" // the remote's copy of this entity failed validation on receive, or comes from a newer git-handoff: kept back
  | "unsafe_repair" // sync --repair would lower a fence, undo a finished task or a review, remove a live claim or lease, or delete a ref this clone lacks (--force does it)
  | "newer_format" // a record here was written by a newer git-handoff in a format this build cannot read: upgrade
  | "remote_timeout" // the sync remote did not answer within the deadline; nothing changed here
  | "remote_rejected" // the sync remote refused a push for its own reasons (hook, protected ref, permissions)
  | "outcome_unknown" // a push went out and neither its report nor a read of the remote came back
  | "environment" // the machine refused: disk full, read-only file system, permission denied, too many open files
  | "addressed_elsewhere" // the task is addressed (--to) to another kind of agent or machine
  | "task_failed" // wait: the agent reported failure, or the lease expired too many times
  | "task_cancelled" // wait: the task was cancelled
  | "timed_out" // wait: --timeout ran out (the task it created is cancelled)
  | "interrupted" // wait: interrupted by a signal (the task it created is cancelled)
  | "port_in_use" // the dashboard's port on 127.0.0.1 is taken
  | "would_deadlock" // a worker's own task hands work to that same worker, which is busy with it
  | "holder_gone" // ask: the agent asked is gone (ended or silent); reclaim instead
  | "too_costly" // a lease or claim could not compare its patterns with the live leases within the budget of glob matching
  | "internal"; // an unexpected error: a bug

export const EXIT_CODES: Record<ErrorCode, number> = {
  usage: 2,
  invalid_input: 2,
  corrupt_state: 2,
  not_a_repo: 2,
  not_found: 4,
  held_by_other: 3,
  clock_skew: 3,
  not_holder: 3,
  final_state: 3,
  no_task_ready: 3,
  lost_race: 3,
  exists: 3,
  blocked: 3,
  cycle: 3,
  verification_failed: 3,
  wrong_state: 3,
  remote_unreachable: 3,
  conflict: 3,
  at_capacity: 3,
  self_review: 3,
  unapproved_command: 3,
  quarantined: 3,
  unsafe_repair: 3,
  newer_format: 3,
  remote_timeout: 3,
  remote_rejected: 3,
  outcome_unknown: 3,
  environment: 5,
  addressed_elsewhere: 3,
  task_failed: 6,
  task_cancelled: 7,
  timed_out: 8,
  interrupted: 130,
  port_in_use: 3,
  would_deadlock: 3,
  holder_gone: 3,
  too_costly: 3,
  internal: 1,
};

/** What the caller can do about a refusal: wait, negotiate ownership, or take other work. */
export interface Suggestion {
  action: "wait" | "negotiate" | "work_elsewhere" | "retry" | "reclaim" | "fix_input";
  detail: string;
}

export interface Refusal {
  code: ErrorCode;
  message: string;
  /** Machine-readable context: holder, task, expires_at and the like. */
  data?: Record<string, unknown>;
  suggestions?: Suggestion[];
}

/** Whether trying again later could succeed without changing the request. */
export function isRecoverable(code: ErrorCode): boolean {
  return code === "held_by_other" || code === "lost_race" || code === "no_task_ready" || code === "remote_unreachable" || code === "blocked" || code === "remote_timeout" || code === "outcome_unknown";
}

/** A refusal thrown across layers; caught once, at the front end. */
export class HandoffError extends Error {
  readonly refusal: Refusal;
  constructor(refusal: Refusal) {
    super(refusal.message);
    this.refusal = refusal;
  }
  get code(): ErrorCode {
    return this.refusal.code;
  }
}

export function fail(code: ErrorCode, message: string, data?: Record<string, unknown>, suggestions?: Suggestion[]): never {
  throw new HandoffError({ code, message, ...(data ? { data } : {}), ...(suggestions ? { suggestions } : {}) });
}
