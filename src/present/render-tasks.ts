// The issue-4 parts of a task's detail view: dependencies, handoffs, review.
import { edgeText, type BlockedEdge } from "../core/dependency-graph.ts";
import { diffLine } from "../core/diff-summary.ts";
import type { Handoff } from "../core/handoff-record.ts";
import type { Task } from "../core/task.ts";
import { fence, neutralise } from "./untrusted.ts";
import { renderHandoff, renderInboxEntry } from "./handoff-text.ts";
import type { InboxEntry } from "../core/handoff.ts";
import { paint } from "./output.ts";
import { handoffCommand } from "../core/shell-quote.ts";

/** A task's verify command, who wrote it, and whether it may run here (`done` runs it). */
export function verifyText(t: Task, approved: boolean | undefined): string {
  if (!t.verify) return "";
  const lines = [`verify:     ${t.verify}  (written by ${t.created_by})`];
  if (approved === false) lines.push(paint.yellow(`            not written or approved in this clone: done will not run it until a person runs ${handoffCommand("approve", t.id)}`));
  return lines.join("\n");
}

export function taskExtrasText(t: Task, blocked: BlockedEdge[], approved?: boolean): string {
  const lines: string[] = [];
  if (t.after?.length) lines.push(`after:      ${t.after.join(" ")}`);
  for (const e of blocked) lines.push(`${paint.yellow("blocked:")}    ${edgeText(e)}`);
  if (t.verify) lines.push(verifyText(t, approved));
  if (t.base) lines.push(`base:       ${t.base}`);
  if (t.review) {
    const r = t.review;
    const v = r.verification;
    if (t.status === "review" || r.decision) {
      lines.push(`review:     submitted by ${r.submitted_by} at ${r.submitted_at}${r.decision ? `; ${r.decision.verdict} by ${r.decision.by}` : ""}`);
    } else lines.push(`review:     not submitted: the last verification (by ${r.submitted_by} at ${r.submitted_at}) did not pass`);
    if (r.decision?.reason) lines.push(`            reason: ${neutralise(r.decision.reason)}`);
    if (v) lines.push(`verified:   ${verificationLine(v)}`);
    if (r.diff) lines.push(`diff:       ${diffLine(r.diff)}`);
  }
  for (const h of t.handoffs ?? []) lines.push(handoffText(h));
  return lines.length ? "\n" + lines.join("\n") : "";
}

/** The verification with its output tail, fenced: the output is the project's, produced by an agent's run. */
export function verificationDetail(v: NonNullable<NonNullable<Task["review"]>["verification"]>, indent = ""): string {
  const lines = [`${indent}verification ${verificationLine(v)}`, `${indent}  in ${v.cwd}`];
  if (v.uncommitted) lines.push(paint.yellow(`${indent}  ${v.uncommitted} uncommitted change${v.uncommitted === 1 ? "" : "s"} in the worktree ${v.uncommitted === 1 ? "was" : "were"} tested too (not in the commit)`));
  if (v.output_tail) lines.push(`${indent}  output tail${v.truncated_bytes ? ` (${v.truncated_bytes} earlier bytes not kept)` : ""}:`, fence(v.output_tail.replace(/\n$/, ""), `${indent}    `));
  return lines.join("\n");
}

export function verificationLine(v: NonNullable<NonNullable<Task["review"]>["verification"]>): string {
  const status = v.timed_out ? "timed out" : v.passed ? "passed" : `failed (exit ${v.exit_code ?? v.signal})`;
  return `${v.passed ? paint.green(status) : paint.red(status)} in ${(v.duration_ms / 1000).toFixed(1)}s: ${v.command}`;
}

const STYLE = { bold: paint.bold, warn: paint.yellow };

/** A handoff as shown to an agent: our own fields plain, the producer's text fenced and labelled. */
export function handoffText(h: Handoff, indent = ""): string {
  return renderHandoff(h, indent, STYLE);
}

export function inboxEntryText(e: InboxEntry): string {
  return renderInboxEntry(e, STYLE);
}
