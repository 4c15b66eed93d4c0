// HANDOFF_TRACE=<file>: each process appends `<epoch ms> <pid> <step>` lines at the steps of a
// handover (a waiter's creation push, a worker noticing, claiming, running, completing), so one
// round trip across two clones can be laid out on one time line next to GIT_TRACE's git calls.
import { appendFileSync } from "node:fs";

const FILE = process.env.HANDOFF_TRACE;

export function trace(step: string): void {
  if (!FILE) return;
  try {
    appendFileSync(FILE, `${Date.now()} ${process.pid} ${step}\n`);
  } catch {
    /* tracing never fails the work */
  }
}
