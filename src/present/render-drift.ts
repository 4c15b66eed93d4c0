// Drift in `status` and the dashboard: agents' edits outside their declaration, and claims that
// keep being renewed while their branch stands still.
import { formatDuration } from "../core/duration.ts";
import { DRIFT_BUDGET, pathCount, unjudgedWords, type DriftView } from "../core/declaration.ts";
import { paint } from "./output.ts";

/** Declared globs a bounded line names at most. */
const DECLARED_SHOWN = 8;

/** `limit`: lines per section at most (the rest counted, naming `hint`); all when omitted. */
export function driftSectionText(d: DriftView, opts: { limit?: number; hint?: string } = {}): string {
  const lines: string[] = [];
  const shown = <T>(list: T[]) => (opts.limit === undefined ? list : list.slice(0, opts.limit));
  const counted = (length: number) => {
    const n = opts.limit === undefined ? 0 : length - opts.limit;
    if (n > 0) lines.push(`  … ${n} more line${n === 1 ? "" : "s"}${opts.hint ? ` (${opts.hint})` : ""}`);
  };
  if (d.agents.length) {
    lines.push(paint.yellow(driftHeading(d.agents)));
    for (const a of shown(d.agents)) {
      const more = a.count > a.undeclared.length ? ` +${a.count - a.undeclared.length} more` : "";
      const declared = opts.limit !== undefined && a.declared.length > DECLARED_SHOWN ? `${a.declared.slice(0, DECLARED_SHOWN).join(" ")} +${a.declared.length - DECLARED_SHOWN} more` : a.declared.join(" ");
      if (a.undeclared.length) lines.push(`  ${a.agent}  ${a.undeclared.join(" ")}${more}  (declared ${declared})`);
      if (a.unjudged) lines.push(`  ${a.agent}  ${unjudgedWords(pathCount(a.unjudged, "it changed"), a.unjudged !== 1, a.agent, DRIFT_BUDGET, "not counted")}`);
    }
    counted(d.agents.length);
  }
  if (d.stuck.length || d.stuck_total) {
    lines.push(paint.yellow("possibly stuck (lease renewed, branch not moving)"));
    for (const s of shown(d.stuck)) lines.push(`  ${s.task}  ${s.agent}  ${s.branch ?? "(no branch)"} still for ${formatDuration(s.still_ms)} (since ${s.since})`);
    // A bounded view's drift holds the first stuck claims only, and how many there are.
    counted(d.stuck_total ?? d.stuck.length);
  }
  return lines.join("\n");
}

/**
 * The drift section's heading: "undeclared" only where some agent has a path outside its
 * declaration; agents whose changed paths could only go unjudged (their globs past the budget)
 * are not said to have drifted.
 */
export function driftHeading(agents: DriftView["agents"]): string {
  return agents.some((a) => a.undeclared.length) ? "undeclared (changed outside what the agent declared)" : "not judged (changed paths the budget left unchecked against a declaration)";
}

/** What a heartbeat says of the changed paths in its worktree it could not judge: never recorded as drift, never passed over unsaid. */
export function heartbeatDriftNote(unjudged: number): string {
  return unjudged ? `note: ${unjudgedWords(pathCount(unjudged, "changed in this worktree"), unjudged !== 1, null, DRIFT_BUDGET, "not recorded as drift")}` : "";
}
