// A worker runs one task at a time: an agent inside that task handing work to the same worker
// would wait for itself forever. The worker tells its command who it is (environment), and every
// front end that creates a task someone will wait on asks here first.
import { addressMatches, formatAddress, type Address } from "../core/address.ts";
import { fail } from "../core/errors.ts";

/** What the worker puts in its command's environment, besides the task's own variables. */
export const WORKER_ENV = { agent: "HANDOFF_WORKER", machine: "HANDOFF_WORKER_MACHINE", capacity: "HANDOFF_WORKER_CAPACITY", task: "HANDOFF_TASK_ID" } as const;

export function workerEnv(agent: string, machine: string, capacity: number): Record<string, string> {
  return { [WORKER_ENV.agent]: agent, [WORKER_ENV.machine]: machine, [WORKER_ENV.capacity]: String(capacity) };
}

/** Refuses (`would_deadlock`) a task addressed to the worker whose running task is creating it. */
export function refuseSelfDelegation(to: Address | null, env: NodeJS.ProcessEnv = process.env): void {
  const worker = env[WORKER_ENV.agent];
  if (!to || !worker) return;
  const capacity = Number(env[WORKER_ENV.capacity] ?? "1");
  if (capacity > 1) return; // it has room for another task beside this one
  const machine = env[WORKER_ENV.machine] || null;
  if (!addressMatches(to, { agent: worker, machine })) return;
  const running = env[WORKER_ENV.task];
  fail(
    "would_deadlock",
    `this runs inside task ${running ?? "(unknown)"} of worker ${worker}${machine ? ` on ${machine}` : ""}, which takes one task at a time: a task addressed to ${formatAddress(to)} would wait for itself; do the work here, or address it to another agent or machine`,
    { worker, machine, to: formatAddress(to), ...(running ? { task: running } : {}) },
    [{ action: "work_elsewhere", detail: "do this part yourself, or hand it to another kind or machine (--to)" }],
  );
}
