// Drift in `status` and the dashboard: agents' edits outside their declaration, and claims that
// keep being renewed while their branch stands still.
import { formatDuration } from "../core/duration.ts";
import type { DriftView } from "../core/declaration.ts";
import { paint } from "./output.ts";

export function driftSectionText(d: DriftView): string {
  const lines: string[] = [];
  if (d.agents.length) {
    lines.push(paint.yellow("undeclared (changed outside what the agent declared)"));
    for (const a of d.agents) {
      const more = a.count > a.undeclared.length ? ` +${a.count - a.undeclared.length} more` : "";
      lines.push(`  ${a.agent}  ${a.undeclared.join(" ")}${more}  (declared ${a.declared.join(" ")})`);
    }
  }
  if (d.stuck.length) {
    lines.push(paint.yellow("possibly stuck (lease renewed, branch not moving)"));
    for (const s of d.stuck) lines.push(`  ${s.task}  ${s.agent}  ${s.branch ?? "(no branch)"} still for ${formatDuration(s.still_ms)} (since ${s.since})`);
  }
  return lines.join("\n");
}
