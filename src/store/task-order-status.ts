// A task's stored status and live claim at its place in the task order file's head: what the
// listings ask of an order file they were handed (task-listing.ts, ready-index.ts), in a module of
// their own, so that task-order-file.ts is set up in a bundle only when the file is read or
// written (scripts/lazy-ours.mjs).
import { TASK_STATUSES, type TaskStatus } from "../core/task.ts";
import type { OrderHead } from "./task-order-file.ts";

export const statusOfCode = (code: number): TaskStatus | undefined => TASK_STATUSES[code - 97];

/** The stored status of the task at place `i` (as its record holds it, not settled). */
export const storedStatusAt = (head: OrderHead, i: number): TaskStatus | undefined => statusOfCode(head.codes.charCodeAt(i));

/**
 * Whether the task at place `i` is stored as claimed with a claim still live at `ms`: claimed for
 * whoever asks, whatever its record says (no record read). A claim that ran out must be settled.
 */
export const liveClaimAt = (head: OrderHead, i: number, ms: number): boolean => storedStatusAt(head, i) === "claimed" && head.expires[i]! > ms;
