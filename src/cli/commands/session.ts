import type { Command } from "commander";
import { endSessionFor, heartbeatWithDrift, startSessionFor } from "../../store/agent-store.ts";
import { gcAgents } from "../../store/agent-gc.ts";
import { collect, parseInteger, withGlobals, withStore } from "../context.ts";
import { emit } from "../../present/output.ts";
import { agentDetail } from "../../present/render-agents.ts";
import { heartbeatDriftNote } from "../../present/render-drift.ts";

export function registerSession(program: Command): void {
  const session = program.command("session").description("declare what this agent works on (refs/handoff/agents/<agent>)");

  withGlobals(
    session
      .command("start")
      .description("declare this agent's session: objective, planned files, what it awaits; refreshes its heartbeat")
      .requiredOption("--objective <text>", "what this agent is working on")
      .option("--files <glob>", "files it plans to change (repeatable)", collect, [])
      .option("--awaits <text>", "the outcome it waits for, and from whom")
      .option("--session <id>", "the agent runtime's session id (default: $HANDOFF_SESSION)")
      .option("--capacity <n>", "how many tasks this agent holds at once (default: max_concurrent of the policy)"),
    { writes: true, values: { "--files": "file" } },
  ).action(async (o: { objective: string; files: string[]; awaits?: string; session?: string; capacity?: string }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const capacity = o.capacity === undefined ? undefined : parseInteger(o.capacity, "--capacity", 1, 1000);
      const record = await startSessionFor(store, {
        objective: o.objective,
        files: o.files,
        awaits: o.awaits ?? null,
        session: o.session ?? process.env.HANDOFF_SESSION ?? null,
        ...(capacity !== undefined ? { capacity } : {}),
      });
      // Opportunistic: a starting agent sweeps agents silent past gc_after. Never fails the start.
      await gcAgents(store).catch(() => []);
      emit(!!g.json, record, () => `session started for ${record.agent}\n${agentDetail(record)}`);
    });
  });

  withGlobals(session.command("end").description("end this agent's session (it shows as disconnected)"), { writes: true }).action(async (_o, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const record = await endSessionFor(store);
      emit(!!g.json, record, () => `session ended for ${record.agent}`);
    });
  });

  withGlobals(program.command("heartbeat").description("tell others this agent is alive (any command does this, at most once a heartbeat_interval)"), { writes: true }).action(
    async (_o, cmd: Command) => {
      await withStore(cmd, async (store, g) => {
        const { record, drift } = await heartbeatWithDrift(store);
        // The record, and how many changed paths its drift check could not judge (never recorded as drift).
        const note = heartbeatDriftNote(drift.unjudged);
        emit(!!g.json, { ...record, unjudged: drift.unjudged }, () => `heartbeat ${record.agent} at ${record.heartbeat_at}${note ? `\n${note}` : ""}`);
      });
    },
  );
}
