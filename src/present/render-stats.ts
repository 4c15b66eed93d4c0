// The stats report as text, shared by the CLI's `stats` and the MCP stats tool.
import { formatDuration } from "../core/duration.ts";
import type { DurationFigures, Stats } from "../core/stats.ts";

function durations(d: DurationFigures): string {
  if (!d.count) return "none";
  return `median ${formatDuration(d.median_ms!)}, mean ${formatDuration(d.mean_ms!)}, max ${formatDuration(d.max_ms!)} (${d.count})`;
}

export function statsText(s: Stats): string {
  const rate = s.handoffs.ack_rate === null ? "" : ` (${Math.round(s.handoffs.ack_rate * 100)}%)`;
  const byHook = Object.entries(s.hooks.by_hook)
    .map(([h, v]) => `${h} ${[v.deny && `${v.deny} deny`, v.warn && `${v.warn} warn`, v.info && `${v.info} info`].filter(Boolean).join("/")}`)
    .join(", ");
  return [
    `stats ${s.since ? `since ${s.since}` : "over the whole history"} (${s.events} events)`,
    `  duplicate claims refused   ${s.claims.refused_duplicate}   (claims on blocked tasks refused: ${s.claims.refused_blocked}; claims granted: ${s.claims.granted})`,
    `  overlaps at claim time     ${s.overlaps.warn} warn, ${s.overlaps.info} info`,
    `  refused on receive         ${s.received.refused} ref${s.received.refused === 1 ? "" : "s"} from the sync remote`,
    `  caught by hooks            deny ${s.hooks.deny}, warn ${s.hooks.warn}, info ${s.hooks.info}${byHook ? `   (${byHook})` : ""}`,
    `  caught by conflict preview ${s.conflicts.predicted} conflict${s.conflicts.predicted === 1 ? "" : "s"} (${s.conflicts.paths} path${s.conflicts.paths === 1 ? "" : "s"})`,
    `  handoffs                   ${s.handoffs.delivered} delivered, ${s.handoffs.acknowledged} acknowledged${rate}`,
    `  handoff -> ack             ${durations(s.handoffs.time_to_ack)}`,
    `  blocked tasks              ${s.blocked.tasks} (${s.blocked.unblocked} unblocked, ${s.blocked.still_blocked} still blocked${s.blocked.ongoing_ms ? ` for ${formatDuration(s.blocked.ongoing_ms)} so far` : ""})`,
    `  time blocked               ${durations(s.blocked.time_blocked)}`,
    `  leases                     ${s.leases.file_leases_expired} file leases expired, ${s.leases.claims_expired} claims expired, ${s.leases.taken_over} taken over, ${s.leases.reclaimed} reclaimed`,
    `  review                     verification ${s.review.verified_passed} passed / ${s.review.verified_failed} failed; ${s.review.accepted} accepted / ${s.review.rejected} rejected`,
  ].join("\n");
}
