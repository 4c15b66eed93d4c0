import type { Command } from "commander";
import { accept, listReview, reject } from "../../store/review-actions.ts";
import { unblockedText } from "../../store/dependency-actions.ts";
import { withGlobals, withStore } from "../context.ts";
import { emit, warn } from "../../present/output.ts";
import { reviewItemText } from "../../present/render-review.ts";

export function registerReview(program: Command): void {
  const review = withGlobals(
    program.command("review").description("the review queue: verified work with its test result and diff summary; accept or reject it"),
  ).action(async (_o, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const { items, problems } = await listReview(store);
      for (const p of problems) warn(p);
      emit(!!g.json, items, () => (items.length ? items.map(reviewItemText).join("\n\n") : "nothing awaits review"));
    });
  });

  withGlobals(review.command("accept").description("accept reviewed work: the task becomes done").argument("<task>").option("--reason <text>", "a comment"), { writes: true, values: { task: "task" } }).action(
    async (id: string, o: { reason?: string }, cmd: Command) => {
      await withStore(cmd, async (store, g) => {
        const t = await accept(store, id, o.reason ?? null);
        const freed = g.json ? "" : await unblockedText(store, t.id);
        emit(!!g.json, t, () => `accepted ${t.id}: done${freed}`);
      });
    },
  );

  withGlobals(
    review.command("reject").description("reject reviewed work: the task goes back to todo with the reason attached").argument("<task>").option("--reason <text>", "what to fix"),
    { writes: true, values: { task: "task" } },
  ).action(async (id: string, o: { reason?: string }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const t = await reject(store, id, o.reason ?? null);
      emit(!!g.json, t, () => `rejected ${t.id}: back to todo${o.reason ? ` (${o.reason})` : ""}`);
    });
  });
}
