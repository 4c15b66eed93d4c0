// complete_task's verification, as the agent sees it: the verdict when it came in within the
// call's bound, else `verifying` and a wait_task to call. Both tools answer a verdict the same way.
import { HandoffError } from "../core/errors.ts";
import type { Task } from "../core/task.ts";
import { taskDetail } from "../present/render.ts";
import { verificationDetail } from "../present/render-tasks.ts";
import { nextCall, spell, steps, verificationFailure } from "../present/suggestions.ts";
import type { Store } from "../store/store.ts";
import { markRunReported, readVerificationRun, type VerificationRun } from "../store/verification-runs.ts";
import type { ToolContext, ToolReply } from "./tool.ts";
import { pollUntil } from "./wait.ts";

/** A verdict is one small local file to read: polled often, so a quick verification answers quickly. */
const VERDICT_POLL_MS = 40;

/** Waits up to `boundMs` for the run's verdict; null while it still runs. */
export async function awaitVerdict(ctx: ToolContext, store: Store, run: VerificationRun, boundMs: number): Promise<{ run: VerificationRun | null; waitedMs: number }> {
  const r = await pollUntil(ctx, boundMs, async () => {
    const now = readVerificationRun(store, run.task);
    if (!now || now.run_id !== run.run_id) return { ...run, state: "lost" as const };
    return now.state === "running" ? null : now;
  }, Math.min(VERDICT_POLL_MS, ctx.session.pollMs));
  return { run: r.value, waitedMs: r.waitedMs };
}

/**
 * The verdict as a reply, or as the refusal it is: passed -> the task in review; failed ->
 * `verification_failed` with the output tail (the task stays with its agent); refused -> the
 * store's refusal, whatever it is (held by another agent meanwhile, a command not approved here).
 */
export function verdictReply(store: Store, run: VerificationRun, waitedMs: number): ToolReply {
  markRunReported(store, run);
  if (run.state === "refused") throw new HandoffError(run.error!);
  if (run.state !== "recorded" || !run.result) {
    throw new HandoffError({
      code: "internal",
      message: `the verification runner of ${run.task} ended without a verdict (killed or crashed); nothing was recorded`,
      data: { task: run.task },
      suggestions: [{ action: "retry", detail: `call ${spell(steps.done(run.task), "mcp")} again` }],
    });
  }
  const t: Task = run.result;
  const v = t.review?.verification;
  if (!v) throw new HandoffError({ code: "internal", message: `task ${t.id} has no verification recorded` });
  if (!v.passed) throw new HandoffError(verificationFailure(t, "mcp"));
  const summary = `${t.id} is in review: verification passed in ${(v.duration_ms / 1000).toFixed(1)}s; a reviewer accepts or rejects it`;
  return {
    data: { task: t, state: "review", final: true, verification: v, waited_ms: waitedMs },
    text: `${summary}\n${verificationDetail(v)}\n${taskDetail(t, store.now())}`,
    summary,
    next: [nextCall(steps.claimNext(), "take the next task while the review is pending"), nextCall(steps.review(), "if you review others' work: what awaits review")],
  };
}

/** The run is still under way: the task as it stands, and wait_task as the way to the verdict. */
export function verifyingReply(store: Store, task: Task, run: VerificationRun, waitedMs: number): ToolReply {
  const summary = `${task.id} is verifying (${task.verify ?? "its verify command"}, started ${run.started_at}); call wait_task for the verdict`;
  return {
    data: { task, state: "verifying", final: false, waited_ms: waitedMs, run: { started_at: run.started_at, pid: run.pid, command: task.verify ?? null } },
    text: `${summary}\n${taskDetail(task, store.now())}`,
    summary,
    next: [nextCall(steps.waitTask(task.id), "blocks until the verdict is in (or about 50 s pass; then call it again)")],
  };
}
