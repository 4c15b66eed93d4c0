import type { Command } from "commander";
import { conflictSummaryLine, pairLine } from "../../core/conflict.ts";
import { recordConflicts } from "../../store/conflict-catches.ts";
import { predictConflicts } from "../../store/conflicts.ts";
import { withGlobals, withStore } from "../context.ts";
import { emit } from "../../present/output.ts";

export function registerConflicts(program: Command): void {
  withGlobals(
    program
      // `conflicts` is the merge preview; operations refused at sync are `sync-conflicts`.
      .command("conflicts")
      .alias("merge-preview")
      .description("predict merge conflicts between the branches of active agents, and each against the integration branch (git merge-tree, no worktree touched)"),
  ).action(async (_o, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const report = await predictConflicts(store);
      await recordConflicts(store, report);
      emit(!!g.json, report, () => [conflictSummaryLine(report), ...report.pairs.map((p) => `  ${pairLine(p)}`)].join("\n"));
    });
  });
}
