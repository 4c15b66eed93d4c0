// The session loop as text: its plan (`loop plan`) and its state (`loop status`, `loop run`).
import type { LoopPlan } from "../core/loop-plan.ts";
import { isTerminal, type LoopRecord } from "../core/loop-record.ts";

export function loopPlanText(plan: LoopPlan, maxWorktrees: number): string {
  if (!plan.units.length && !plan.waiting.length) return "nothing to plan: no task is ready";
  const lines = plan.units.length
    ? [`${plan.units.length} unit${plan.units.length === 1 ? "" : "s"}, up to ${maxWorktrees} worktree${maxWorktrees === 1 ? "" : "s"} at once:`]
    : ["no unit: nothing is ready"];
  for (const u of plan.units) {
    lines.push(`  ${u.id}: ${u.tasks.join(" -> ")}${u.scope.length ? `  (scope ${u.scope.join(" ")})` : ""}${u.after.length ? `  after ${u.after.join(", ")}` : ""}`);
  }
  if (plan.waiting.length) {
    lines.push("left out:");
    for (const w of plan.waiting) lines.push(`  ${w.task}: ${w.reason}`);
  }
  if (plan.not_compared) lines.push(`note: ${plan.not_compared.note}`);
  return lines.join("\n");
}

export function loopStatusText(r: LoopRecord | null): string {
  if (!r) return "no loop has run here (start one: git handoff loop run --agent-cmd CMD)";
  const lines = [`${r.id}: ${r.phase}, into ${r.integration} by ${r.strategy}; runner pid ${r.runner.pid} on ${r.runner.host}; started ${r.started_at}, updated ${r.updated_at}`];
  for (const u of r.units) {
    // A finished unit's branch and worktree are named only while they are kept (a failed unit
    // that committed nothing had both removed).
    const where = [u.agent, u.pid ? `pid ${u.pid}${u.host ? ` on ${u.host}` : ""}` : null, u.kept || !isTerminal(u.phase) ? u.branch : null, u.kept && u.worktree ? `worktree ${u.worktree}` : null].filter(Boolean).join(", ");
    lines.push(`  ${u.id} ${u.phase}: ${u.tasks.join(" ")}  (${where}${u.starts > 1 ? `, started ${u.starts} times` : ""})`);
    if (u.note) lines.push(`    ${u.note}`);
  }
  return lines.join("\n");
}
