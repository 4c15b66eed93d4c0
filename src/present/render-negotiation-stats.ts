// The drift and negotiation lines of the stats report (CLI `stats`, MCP stats tool).
import { formatDuration } from "../core/duration.ts";
import type { NegotiationStats } from "../core/negotiation-stats.ts";

export function negotiationStatsText(s: NegotiationStats): string {
  const r = s.requests;
  const t = r.time_to_answer;
  const wait = t.count ? `median ${formatDuration(t.median_ms!)}, mean ${formatDuration(t.mean_ms!)}, max ${formatDuration(t.max_ms!)} (${t.count})` : "none";
  return [
    `  undeclared edits           ${s.undeclared.notices} notice${s.undeclared.notices === 1 ? "" : "s"} (${s.undeclared.paths} path${s.undeclared.paths === 1 ? "" : "s"} outside a declaration, ${s.undeclared.agents} agent${s.undeclared.agents === 1 ? "" : "s"})`,
    `  release requests           ${r.asked} asked, ${r.answered} answered (${r.released} released, ${r.kept} kept), ${r.open} open`,
    `  request -> answer          ${wait}`,
  ].join("\n");
}
