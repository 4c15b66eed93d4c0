// Whether a task's stored verify command may run in this clone, and what a person is shown before
// approving it: the command, who wrote it, and where it came from.
import { fail } from "../core/errors.ts";
import type { Task } from "../core/task.ts";
import { approvalOf, commandHash, type Approval } from "./approvals.ts";
import type { Store } from "./store.ts";
import { handoffCommand } from "../core/shell-quote.ts";

export interface VerifyConsent {
  task: string;
  command: string;
  /** Who wrote it: the task's creator (names are self-declared, see the security model). */
  author: string;
  hash: string;
  /** How it may run here, or null when nobody in this clone approved it. */
  approval: Approval | null;
  /** Where the record came from, in words. */
  origin: string;
}

export async function verifyConsent(store: Store, task: Task): Promise<VerifyConsent | null> {
  if (!task.verify) return null;
  const approval = await approvalOf(store, task.verify);
  const remote = await store.syncRemote().catch(() => null);
  const origin = approval?.how === "written"
    ? "written in this clone"
    : remote
      ? `written elsewhere (received from the sync remote ${remote}), or by hand`
      : "not written by git-handoff in this clone";
  return { task: task.id, command: task.verify, author: task.created_by, hash: commandHash(task.verify), approval, origin };
}

/** Refuses (`unapproved_command`, nothing runs) unless the command was written or approved here. */
export async function requireApprovedVerify(store: Store, task: Task, command: string): Promise<void> {
  if (command === task.verify && (await approvalOf(store, command))) return;
  fail(
    "unapproved_command",
    `task ${task.id}'s verify command was not written or approved in this clone, so it did not run: ${JSON.stringify(command)} (written by ${task.created_by})`,
    { task: task.id, command, author: task.created_by },
    [{ action: "fix_input", detail: `a person (not an agent) reads it and approves it: ${handoffCommand("approve", task.id)}` }],
  );
}
