// How a handoff reads when shown to an agent (CLI, SessionStart hook context, MCP text): our own
// fields plain, the producer's free text fenced under the untrusted label.
import { diffLine } from "../core/diff-summary.ts";
import type { InboxEntry } from "../core/handoff.ts";
import type { Handoff } from "../core/handoff-record.ts";
import type { Rejection } from "../core/rejection-inbox.ts";
import { fence, UNTRUSTED_LABEL } from "./untrusted.ts";
import { spell, steps, type FrontEnd } from "./suggestions.ts";

export interface Styles {
  bold(s: string): string;
  warn(s: string): string;
}

const PLAIN: Styles = { bold: (s) => s, warn: (s) => s };

export function renderHandoff(h: Handoff, indent = "", style: Styles = PLAIN): string {
  const lines = [
    `${indent}${style.bold(`handoff ${h.id}`)} from ${h.producer}${h.to ? ` to ${h.to}` : " to whoever takes the dependent tasks"} at ${h.created_at}`,
  ];
  if (h.commit) lines.push(`${indent}  commit:    ${h.commit}`);
  if (h.diff) lines.push(`${indent}  diff:      ${diffLine(h.diff)}`);
  if (h.diff?.paths.length) lines.push(`${indent}  files:     ${h.diff.paths.slice(0, 10).join(" ")}${h.diff.paths.length > 10 ? " …" : ""}`);
  const texts: [string, string | null][] = [["contract", h.contract], ["verify", h.verify], ["note", h.note]];
  const questions = h.questions.map((q, i): [string, string] => [`question ${i + 1}`, q]);
  const shown = [...texts, ...questions].filter((x): x is [string, string] => !!x[1]);
  if (shown.length) {
    lines.push(`${indent}  ${style.warn(`[${UNTRUSTED_LABEL}]`)}`);
    for (const [label, text] of shown) lines.push(`${indent}  ${label}:`, fence(text, `${indent}    `));
  }
  if (h.acked_by.length) lines.push(`${indent}  acked by:  ${h.acked_by.map((a) => a.agent).join(" ")}`);
  return lines.join("\n");
}

export function renderInboxEntry(e: InboxEntry, style: Styles = PLAIN): string {
  const why = e.reason === "addressed" ? "addressed to you" : `you hold ${e.via}, which waits on ${e.handoff.task}`;
  return `${renderHandoff(e.handoff, "", style)}\n  for you:   ${why} (task ${e.handoff.task} is ${e.task_status})`;
}

/** The inbox as context for an agent's session start (a hook adds it to the agent's context). */
export function inboxContext(agent: string, entries: InboxEntry[]): string {
  if (!entries.length) return "";
  const head = `git-handoff: ${entries.length} handoff${entries.length === 1 ? "" : "s"} waiting for ${agent} (acknowledge each with: git handoff ack <id>)`;
  return [head, ...entries.map((e) => renderInboxEntry(e))].join("\n\n");
}

/** A rejected review, as its author reads it (CLI inbox, SessionStart context): the reason fenced. */
export function renderRejection(r: Rejection, style: Styles = PLAIN, front: FrontEnd = "cli"): string {
  const next = r.status === "todo" ? `claim it again: ${spell(steps.claim(r.task), front)}` : r.holder ? `now ${r.status} by ${r.holder}` : r.status;
  const lines = [`${style.bold(`review of ${r.task} rejected`)} by ${r.by} at ${r.at}: ${next}`];
  if (r.reason) lines.push(`  ${style.warn(`[${UNTRUSTED_LABEL}]`)}`, "  reason:", fence(r.reason, "    "));
  return lines.join("\n");
}

export function rejectionsContext(agent: string, rejections: Rejection[]): string {
  if (!rejections.length) return "";
  const head = `git-handoff: ${rejections.length} review${rejections.length === 1 ? "" : "s"} of ${agent}'s work rejected`;
  return [head, ...rejections.map((r) => renderRejection(r))].join("\n\n");
}
