// What `wait` tells the person waiting, one line per change it saw on the task.
import { formatAddress } from "../core/address.ts";
import type { Task } from "../core/task.ts";
import { neutralise, neutraliseLine } from "./untrusted.ts";

const clock = (iso: string) => iso.slice(11, 19);

/** Lines describing how `next` differs from `prev` (the task as last seen; null at first). */
export function progressLines(prev: Task | null, next: Task): string[] {
  const id = next.id;
  const lines: string[] = [];
  if (!prev) lines.push(`waiting for ${id}${next.to ? ` (to ${formatAddress(next.to)})` : ""}: ${neutralise(next.objective.split("\n")[0]!.slice(0, 100))}`);
  const was = prev?.claim ?? null;
  const now = next.claim;
  // Holders' names come from records others wrote (a commit's author): never raw on a terminal.
  const holder = (c: { agent: string }) => neutraliseLine(c.agent);
  if (now && (!was || was.agent !== now.agent || was.fence !== now.fence)) {
    lines.push(`${id}: claimed by ${holder(now)} (attempt ${next.attempts + 1} of ${next.max_attempts}), lease until ${clock(now.expires_at)}`);
  } else if (now && was && now.expires_at !== was.expires_at) {
    lines.push(`${id}: renewed by ${holder(now)} until ${clock(now.expires_at)}`);
  } else if (prev?.status === "review" && next.status === "todo" && next.review?.decision?.verdict === "rejected") {
    const d = next.review.decision;
    lines.push(`${id}: rejected in review by ${neutraliseLine(d.by)}${d.reason ? `: ${neutralise(d.reason)}` : ""}; back in the queue`);
  } else if (!now && was && next.status === "todo") {
    lines.push(next.attempts > (prev?.attempts ?? 0) ? `${id}: the lease of ${holder(was)} expired; back in the queue (${next.attempts} of ${next.max_attempts} attempts used)` : `${id}: released by ${holder(was)}; back in the queue`);
  } else if (!prev && next.status === "todo") {
    lines.push(`${id}: queued (priority ${next.priority})`);
  }
  // Its work is submitted; the task ends when a reviewer accepts it (or rejects it and it is done again).
  if (prev?.status !== next.status && next.status === "review") {
    const by = next.review?.submitted_by;
    lines.push(`${id}: in review${by ? `, submitted by ${neutraliseLine(by)}` : ""}: a reviewer decides (git handoff review accept|reject ${id})`);
  }
  if (prev?.status !== next.status && (next.status === "done" || next.status === "failed" || next.status === "cancelled")) {
    const reason = next.result?.reason ? `: ${neutralise(next.result.reason)}` : "";
    lines.push(`${id}: ${next.status}${reason}`);
  }
  return lines;
}
