import type { Command } from "commander";
import { parseSince } from "../../core/duration.ts";
import { fail } from "../../core/errors.ts";
import { EVENT_TYPES, type EventType } from "../../core/event.ts";
import { validateAgentId, validateTaskId } from "../../core/ids.ts";
import { readEvents } from "../../store/events.ts";
import { CALLER_RECORDS } from "../../store/record-cache-file.ts";
import { parseInteger, withGlobals, withStore } from "../context.ts";
import { packAfterView } from "../view-packing.ts";
import { emit, warn } from "../../present/output.ts";
import { eventLines } from "../../present/render.ts";

export function registerEvents(program: Command): void {
  withGlobals(
    program
      .command("events")
      .description("the event history, read from the commits under refs/handoff/ (oldest first)")
      .option("--since <time>", "an ISO time, or a duration back from now (2h, 7d)")
      .option("--task <id>", "only this task")
      .option("--agent <name>", "only events about or by this agent")
      .option("--type <type>", `only this type, one of: ${EVENT_TYPES.join(", ")}`)
      .option("--limit <n>", "only the most recent N"),
    // here --agent filters; `git handoff --agent A events` still names the caller
    { agent: false, values: { "--task": "task", "--agent": "agent", "--type": EVENT_TYPES } },
  ).action(async (o: { since?: string; task?: string; type?: string; limit?: string }, cmd: Command) => {
    const agentFilter = (cmd.opts() as { agent?: string }).agent;
    await withStore(cmd, async (store, g) => {
      // The caller's own record (its heartbeat) is kept between runs, apart from status's listing:
      // no pack read for it, and no listing parsed for it either (CALLER_RECORDS).
      store.keepRecords(CALLER_RECORDS);
      if (o.type !== undefined && !EVENT_TYPES.includes(o.type as EventType)) {
        // The list is long: the first types, then where to see them all, so the error stays one short line.
        const all = EVENT_TYPES;
        fail("invalid_input", `unknown event type ${JSON.stringify(o.type.slice(0, 40))}: use one of ${all.slice(0, 12).join(", ")}, … (all ${all.length}: git handoff help events)`);
      }
      const events = await readEvents(store, {
        ...(o.since !== undefined ? { since: parseSince(o.since, store.now()) } : {}),
        ...(o.task !== undefined ? { task: validateTaskId(o.task) } : {}),
        ...(agentFilter !== undefined ? { agent: validateAgentId(agentFilter) } : {}),
        ...(o.type !== undefined ? { type: o.type } : {}),
        ...(o.limit !== undefined ? { limit: parseInteger(o.limit, "--limit", 1, 1_000_000) } : {}),
      }, o.task === undefined ? { onProblem: warn, index: true } : {});
      emit(!!g.json, events, () => (events.length ? eventLines(events).join("\n") : "no events"));
      await packAfterView(store);
    }, { agentFilters: true });
  });
}
