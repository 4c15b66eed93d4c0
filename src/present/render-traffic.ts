// The sync remote's share of `stats`: what this clone asks of it, per minute.
import type { TrafficFigures } from "../sync/remote-traffic.ts";

export function trafficText(t: TrafficFigures): string {
  const over = t.window_minutes >= 59.5 ? "the last hour" : `the last ${t.window_minutes} min`;
  return [
    // The label padded to the other rows' column (render-stats.ts); a long remote name keeps one space.
    `  ${`sync remote ${t.remote}`.padEnd(26)} ${t.pushes_per_minute} pushes/min, ${t.ls_remotes_per_minute} ls-remotes/min, ${t.fetches_per_minute} fetches/min over ${over} (${t.pushes} / ${t.ls_remotes} / ${t.fetches})`,
    `  push budget                ${t.pushes_last_minute} of ${t.max_pushes_per_minute} pushes in the last minute (git config handoff.maxPushesPerMinute)`,
  ].join("\n");
}
