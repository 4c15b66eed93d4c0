import { isWordText } from "../core/char-scan.ts";
import { formatUntil } from "../core/duration.ts";
import { graceMark } from "./grace-mark.ts";
import type { Lease } from "../core/lease.ts";
import type { CheckResult } from "../store/lease-actions.ts";

export function leaseLine(l: Lease & { grace_until?: string }, now: Date): string {
  const left = Date.parse(l.expires_at) - now.getTime();
  const until = l.grace_until ? graceMark(left, l.expires_at, l.grace_until) : `until ${l.expires_at} (${formatUntil(left)})`;
  const bits = [l.pattern.padEnd(28), l.exclusive ? "exclusive" : "shared   ", l.agent.padEnd(20), until];
  if (l.task) bits.push(`task ${l.task}`);
  if (l.auto) bits.push("(auto)");
  // A claim's scope lease has the reason "task <id>": said once.
  if (l.reason && !(l.task && l.reason === `task ${l.task}`)) bits.push(`— ${l.reason}`);
  return bits.join("  ");
}

export function checkText(r: CheckResult): string {
  const lines: string[] = [];
  for (const a of r.paths) {
    if (a.verdict === "ok") {
      lines.push(a.ignored ? `ok    ${a.path} (ignored by policy)` : `ok    ${a.path}`);
      continue;
    }
    lines.push(verdictColumn(a.message));
    for (const s of a.suggestions) lines.push(`        ${s.action}: ${s.detail}`);
  }
  return lines.join("\n");
}

/** `warn: <text>` as `warn  <text>`: the leading word padded to a column (as `/^(\w+): /` replaced, without compiling it). */
function verdictColumn(message: string): string {
  const colon = message.indexOf(": ");
  return colon > 0 && isWordText(message.slice(0, colon)) ? message.slice(0, colon).padEnd(6) + message.slice(colon + 2) : message;
}
