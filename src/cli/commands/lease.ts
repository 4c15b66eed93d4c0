import type { Command } from "commander";
import { fail } from "../../core/errors.ts";
import { validateAgentId } from "../../core/ids.ts";
import { lease, listLeases, resolvePaths, unlease } from "../../store/lease-actions.ts";
import { reclaimLeasesFor } from "../../store/lease-reclaim.ts";
import { withGlobals, withStore } from "../context.ts";
import { verbCommand } from "../verb-command.ts";
import { CHECK } from "./check.ts";
import { emit, warn } from "../../present/output.ts";
import { leaseLine } from "../../present/lease-render.ts";

export function registerLease(program: Command, verb?: string): void {
  const wants = (name: string) => verb === undefined || verb === name;
  if (wants("lease")) withGlobals(
    program
      .command("lease")
      .description("lease files or globs for the calling agent (shared by default; exit 3 if another agent's lease is in the way)")
      .argument("<path...>", "files, folders (trailing /) or globs like 'src/api/**'")
      .option("--exclusive", "nobody else may lease or edit anything overlapping (checks answer deny)")
      .option("--task <id>", "the task this lease serves, one you hold: it lasts as long as your claim (refused for a task you do not hold; one not here yet is allowed)")
      .option("--ttl <duration>", "lease length, like 30m or 2h (default lease_ttl, else claim_ttl, else 30m)")
      .option("--reason <text>", "why, shown to agents that run into it"),
    { writes: true, values: { path: "file", "--task": "task" } },
  ).action(async (paths: string[], o: { exclusive?: boolean; task?: string; ttl?: string; reason?: string }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const r = await lease(store, paths, o);
      if (r.task_not_found) warn(`no task ${r.task_not_found} here (a typo, or not synced yet): the lease stands on its own TTL`);
      if (r.not_extended) warn(r.not_extended.note);
      const now = store.now();
      emit(!!g.json, r, () =>
        [
          ...r.leased.map((l) => `leased ${leaseLine(l, now)}`),
          ...r.ignored.map((p) => `not leased (ignored by policy): ${p}`),
        ].join("\n"),
      );
    });
  });

  if (wants("unlease")) withGlobals(
    program
      .command("unlease")
      .description("release your leases on files or globs (as you leased them)")
      .argument("[path...]", "the paths or globs to release")
      .option("--all", "release every lease you hold")
      .option("--reclaim", "force-release other agents' leases on these paths whose task is finished or whose holder is gone (logged)")
      .option("--holder <agent>", "with --reclaim: only this holder's lease")
      .option("--reason <text>", "with --reclaim: why (required)"),
    { writes: true, values: { path: "file", "--holder": "agent" } },
  ).action(async (paths: string[], o: { all?: boolean; reclaim?: boolean; holder?: string; reason?: string }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      if (o.reclaim) {
        if (o.all) fail("usage", "--reclaim names the leased paths; it does not take --all");
        if (o.reason === undefined) fail("usage", "unlease --reclaim needs --reason TEXT");
        const holder = o.holder !== undefined ? validateAgentId(o.holder) : undefined;
        const r = await reclaimLeasesFor(store, resolvePaths(store, paths), { reason: o.reason, ...(holder !== undefined ? { holder } : {}) });
        emit(!!g.json, r, () => r.released.map((l) => `reclaimed ${l.pattern} from ${l.agent}`).join("\n"));
        return;
      }
      const r = await unlease(store, paths, o);
      const lines = [
        ...r.released.map((p) => `unleased ${p}`),
        ...r.not_released.map((n) => `not held: ${n.path}${n.holders.length ? ` (held by ${n.holders.join(", ")})` : " (nobody holds it)"}`),
      ];
      emit(!!g.json, r, () => (lines.length ? lines.join("\n") : "nothing to release"));
    });
  });

  if (wants("leases")) withGlobals(program.command("leases").description("list live file leases").option("--agent <name>", "only this agent's leases"), {
    agent: false,
    values: { "--agent": "agent" },
  }).action(async (_o, cmd: Command) => {
    // Positional options: `--agent` after the verb is this filter; before it, it names the caller.
    const agent = (cmd.opts() as { agent?: string }).agent;
    await withStore(cmd, async (store, g) => {
      const { leases, stale } = await listLeases(store, agent !== undefined ? { agent: validateAgentId(agent) } : {});
      // On stderr, so the --json array keeps its shape (each lease is marked newer_on_remote).
      if (stale) warn(stale);
      const now = store.now();
      emit(!!g.json, leases, () => (leases.length ? leases.map((l) => leaseLine(l, now)).join("\n") : "no live leases"));
    }, { agentFilters: true });
  });

  if (wants("check")) verbCommand(program, CHECK);
}
