import type { Command } from "commander";
import { parseSince } from "../../core/duration.ts";
import { computeStats } from "../../core/stats.ts";
import { statsText } from "../../present/render-stats.ts";
import { readStatsEvents } from "../../store/events.ts";
import { CALLER_RECORDS } from "../../store/record-cache-file.ts";
import { withGlobals, withStore } from "../context.ts";
import { packAfterView } from "../view-packing.ts";
import { emit, warn } from "../../present/output.ts";
import { trafficText } from "../../present/render-traffic.ts";
import { remoteTrafficFor } from "../../sync/remote-traffic.ts";
import { negotiationStats } from "../../core/negotiation-stats.ts";
import { negotiationStatsText } from "../../present/render-negotiation-stats.ts";

export function registerStats(program: Command): void {
  withGlobals(
    program
      .command("stats")
      .description("what coordination caught and cost, from the event history: refused duplicate claims, hook catches, predicted conflicts, handoffs and acks, blocked time, expired leases, review results")
      .option("--since <time>", "only what happened since: an ISO time, or a duration back from now (2h, 7d)"),
  ).action(async (o: { since?: string }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      // The caller's own record (its heartbeat) is kept between runs, apart from status's listing:
      // no pack read for it, and no listing parsed for it either (CALLER_RECORDS).
      store.keepRecords(CALLER_RECORDS);
      const now = store.now();
      const since = o.since !== undefined ? parseSince(o.since, now) : null;
      // The whole history is read: state from before the window (dependencies, handoffs) matters.
      // A damaged ref is reported and skipped, as `events` does: it must not hide everyone's figures.
      // Through the event index: the events it reads in detail, and only the times of the rest.
      const { events, counted, partners } = await readStatsEvents(store, { onProblem: warn, since });
      const stats = computeStats(events, { since, now, counted, ...(partners ? { partners } : {}) });
      const negotiation = negotiationStats(events, since);
      // What this clone asks of its sync remote: pushes, listings and fetches per minute.
      const remote = await remoteTrafficFor(store);
      const out = { ...stats, drift: negotiation.undeclared, negotiation: negotiation.requests, ...(remote ? { remote } : {}) };
      emit(!!g.json, out, () => `${statsText(stats)}\n${negotiationStatsText(negotiation)}${remote ? `\n${trafficText(remote)}` : ""}`);
      await packAfterView(store);
    });
  });
}
