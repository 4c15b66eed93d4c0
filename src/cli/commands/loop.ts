import type { Command } from "commander";
import { parseDuration } from "../../core/duration.ts";
import { EXIT_CODES, fail } from "../../core/errors.ts";
import { planLoop } from "../../core/loop-plan.ts";
import { MERGE_STRATEGIES, type MergeStrategy } from "../../core/loop-record.ts";
import { emit } from "../../present/output.ts";
import { loopPlanText, loopStatusText } from "../../present/render-loop.ts";
import { neutralise } from "../../present/untrusted.ts";
import { loadLoop } from "../../store/loop-store.ts";
import { listTasks } from "../../store/task-store.ts";
import { agentClient, AGENT_CLIENTS } from "../../work/agent-command.ts";
import { resolveExec } from "../../work/exec-command.ts";
import { catchInterrupts } from "../../work/interrupts.ts";
import { agentCommand } from "../../work/loop-agent.ts";
import { checkBranchName } from "../../work/loop-begin.ts";
import { runLoop } from "../../work/loop-run.ts";
import { abandonLoop, requestStop } from "../../work/loop-stop.ts";
import { parseInteger, startDir, withGlobals, withStore } from "../context.ts";
import { optionLike } from "../../core/option-like.ts";

interface RunOpts {
  agentCmd?: string;
  with?: string;
  maxWorktrees?: string;
  merge?: string;
  verify?: string;
  accept?: boolean;
  push?: boolean;
  keep?: boolean;
  into?: string;
  poll: string;
  unitTimeout: string;
}

const log = (line: string) => process.stderr.write(`git-handoff: ${neutralise(line)}\n`);

function strategyOf(value: string | undefined, fallback: MergeStrategy): MergeStrategy {
  if (value === undefined) return fallback;
  if (!(MERGE_STRATEGIES as readonly string[]).includes(value)) fail("invalid_input", `--merge takes ${MERGE_STRATEGIES.join(", ")}, got ${JSON.stringify(value)}`);
  return value as MergeStrategy;
}

export function registerLoop(program: Command): void {
  const loop = program.command("loop").description("the session loop: ready tasks grouped into units, one worktree and one agent each, verified, merged, cleaned up");

  withGlobals(
    loop
      .command("plan")
      .description("show how ready tasks would be grouped into units (overlapping scopes and dependency chains together); changes nothing")
      .option("--max-worktrees <n>", "units running at once (default loop.max_worktrees, else 2)"),
  ).action(async (o: { maxWorktrees?: string }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const max = o.maxWorktrees !== undefined ? parseInteger(o.maxWorktrees, "--max-worktrees", 1, 64) : store.config.loopMaxWorktrees;
      const { tasks, problems } = await listTasks(store);
      for (const p of problems) log(`warning: ${p}`);
      const plan = planLoop(tasks, store.now(), { maxWorktrees: max });
      emit(!!g.json, { max_worktrees: max, ...plan }, () => loopPlanText(plan, max));
    });
  });

  withGlobals(
    loop
      .command("run")
      .description("run the plan: per unit a branch and a worktree at the integration tip, an agent holding its tasks; finished units are verified and merged in order")
      .option("--agent-cmd <cmd>", "the agent command, run in each unit's worktree (a relative path as its first word, ./do-unit.sh, is taken from where loop run starts) with HANDOFF_AGENT, HANDOFF_LOOP_TASKS, HANDOFF_TASK_FILE, HANDOFF_LOOP_PROMPT_FILE")
      .option("--with <agent>", "run Claude Code or Codex as the agent (claude|codex)")
      .option("--max-worktrees <n>", "units running at once (default loop.max_worktrees, else 2)")
      .option("--merge <strategy>", "merge, squash or rebase (default loop.merge_strategy, else merge)")
      .option("--verify <cmd>", "a check run in a unit's worktree before it is merged; failing keeps the unit unmerged")
      .option("--accept", "accept the unit's tasks whose verification passed (review queue) once it is merged")
      .option("--push", "push the integration branch to the sync remote after each merge")
      .option("--keep", "keep worktrees and branches of merged units (default: loop.auto_cleanup)")
      .option("--into <branch>", "the integration branch (default: the configured one, else the current branch)")
      .option("--unit-timeout <duration>", "how long one unit's agent may run before it is stopped", "2h")
      .option("--poll <duration>", "how often to look at agents and tasks", "500ms"),
    { values: { "--with": AGENT_CLIENTS, "--merge": MERGE_STRATEGIES } },
  ).action(async (o: RunOpts, cmd: Command) => {
    // `--agent-cmd --keep` (the command forgotten) would run `sh -c --keep`: refused, nothing written.
    // The free-text options; the others are checked against what they take (a branch name, a strategy, a number).
    for (const [flag, v] of [["--agent-cmd", o.agentCmd], ["--verify", o.verify]] as const) {
      if (v !== undefined && optionLike(v)) fail("usage", `${flag} needs a value, got ${JSON.stringify(v)}, which looks like an option`);
    }
    // An empty value is no value: --agent-cmd '' is not missing, and --verify '' is not a check.
    if (o.agentCmd !== undefined && !o.agentCmd.trim()) fail("usage", "--agent-cmd is empty");
    if (o.verify !== undefined && !o.verify.trim()) fail("usage", "--verify is empty: give the check command, or leave --verify out");
    if (!!o.agentCmd === !!o.with) fail("usage", "loop run needs one of --agent-cmd CMD or --with claude|codex");
    // Checked once, here, before any unit starts: each unit runs the command in its own fresh
    // worktree, where a script of your checkout is not (unless committed) and a missing client
    // would fail every unit with exit 127. A relative first word is taken from where loop run starts.
    const command = o.with !== undefined ? agentCommand(agentClient(o.with, "--agent-cmd CMD")) : resolveExec(o.agentCmd!, startDir(cmd), { option: "--agent-cmd", starter: "loop run" });
    const pollMs = parseDuration(o.poll, "--poll");
    const unitTimeoutMs = parseDuration(o.unitTimeout, "--unit-timeout");
    await withStore(cmd, async (store, g) => {
      const maxWorktrees = o.maxWorktrees !== undefined ? parseInteger(o.maxWorktrees, "--max-worktrees", 1, 64) : store.config.loopMaxWorktrees;
      const strategy = strategyOf(o.merge, store.config.loopMergeStrategy);
      const into = o.into === undefined ? null : checkBranchName(o.into);
      const stop = catchInterrupts(() => log("stopping the loop: agents end, their tasks are released (Ctrl-C again to quit at once)"));
      try {
        const r = await runLoop(store, { command, into, maxWorktrees, strategy, verify: o.verify ?? null, accept: !!o.accept, push: !!o.push, keep: !!o.keep || !store.config.loopAutoCleanup, pollMs, unitTimeoutMs, signal: stop.signal, log });
        emit(!!g.json, r, () => (r ? loopStatusText(r) : "nothing to do: no task is ready"));
        if (stop.interrupted) process.exitCode = EXIT_CODES.interrupted;
        // A loop that finished with units it could not merge says so; a stopped one was asked to stop.
        else if (r?.phase === "finished" && r.units.some((u) => u.phase !== "merged")) process.exitCode = EXIT_CODES.conflict;
      } finally {
        stop.close();
      }
    });
  });

  withGlobals(loop.command("status").description("the loop's units, agents (pid and host), branches, worktrees and phases, from any worktree")).action(async (_o, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const r = (await loadLoop(store))?.record ?? null;
      emit(!!g.json, r, () => loopStatusText(r));
    });
  });

  withGlobals(
    loop
      .command("stop")
      .description("end the loop cleanly: agents stopped, their claims released, worktrees without uncommitted work removed")
      .option("--timeout <duration>", "how long to wait for a running loop to stop", "60s")
      .option("--abandon", "end the record of a loop whose runner is on another host or unknown here, acting on nothing it names (its agents, folders and claims are left)"),
  ).action(async (o: { timeout: string; abandon?: boolean }, cmd: Command) => {
    const timeoutMs = parseDuration(o.timeout, "--timeout");
    await withStore(cmd, async (store, g) => {
      const r = o.abandon ? await abandonLoop(store, log) : await requestStop(store, { timeoutMs, log });
      emit(!!g.json, r, () => (r ? loopStatusText(r) : "no loop has run here"));
    });
  });
}
