// Blocking tools: wait for a task to finish, or for work to become ready. Both are bounded and
// re-read state at every poll, so what they return is never older than one poll interval.
import * as z from "zod/mini";
import { HandoffError } from "../../core/errors.ts";
import { readyTasks } from "../../core/dependency-graph.ts";
import { isFinal, type Task as TaskT } from "../../core/task.ts";
import { claimNextTask } from "../../store/task-actions.ts";
import { listTasks, showTask, TASKS_PREFIX } from "../../store/task-store.ts";
import { validateTaskId } from "../../core/ids.ts";
import { Verification } from "../../core/review-record.ts";
import { nextCall, steps } from "../../present/suggestions.ts";
import { readVerificationRun } from "../../store/verification-runs.ts";
import { awaitVerdict, verdictReply, verifyingReply } from "../verification.ts";
import { Task } from "../schemas.ts";
import { defineTool } from "../tool.ts";
import { boundFor, pollUntil } from "../wait.ts";
import { describe, taskLines, taskReply, ttl, waitSeconds } from "./common.ts";

export const waitTask = defineTool({
  name: "wait_task",
  title: "Wait for a task to finish",
  description: [
    "Block until a task reaches a final state (done, failed or cancelled) or about 50 seconds pass, then return the task as it stands.",
    "If `final` is false the wait timed out: call wait_task again to keep waiting (or do other work meanwhile).",
    "Use it when your work depends on a task another agent holds. Do not use it on a task you hold yourself, except for one thing: after complete_task answered state `verifying`, wait_task on that task waits for the verification's verdict instead and answers as complete_task would have: state `review` with `final: true` when it passed, refusal `verification_failed` (task kept, output tail in error.data.verification) when it failed, or the refusal the store gave; `final: false` with state `verifying` while it still runs.",
    "Refusal `not_found`: check the id.",
  ].join("\n"),
  input: { id: describe(z.string(), "the task to wait for"), timeout_seconds: waitSeconds() },
  output: {
    task: Task,
    final: z.boolean(),
    waited_ms: z.number(),
    state: z.enum(["review", "verifying"]),
    verification: Verification,
    run: z.object({ started_at: z.string(), pid: z.nullable(z.number()), command: z.nullable(z.string()) }),
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(a, ctx) {
    const store = await ctx.session.store();
    const own = readVerificationRun(store, validateTaskId(a.id));
    if (own && own.agent === store.actor.agent && !own.reported) {
      // Started by this agent's complete_task and not yet answered: wait for its verdict.
      const { run: verdict, waitedMs } = await awaitVerdict(ctx, store, own, boundFor(ctx, a.timeout_seconds));
      if (verdict) return verdictReply(store, verdict, waitedMs);
      return verifyingReply(store, await showTask(store, a.id), own, waitedMs);
    }
    let last: TaskT | null = null;
    const r = await pollUntil(ctx, boundFor(ctx, a.timeout_seconds), async () => {
      last = await showTask(await ctx.session.store(), a.id);
      return isFinal(last.status) ? last : null;
    });
    const task = (r.value ?? last)!;
    const reply = taskReply(await ctx.session.store(), task, r.timedOut ? `${task.id} is still ${task.status} after ${Math.round(r.waitedMs / 1000)}s; call wait_task again to keep waiting` : `${task.id} is ${task.status}`);
    const next = r.timedOut ? [nextCall(steps.waitTask(task.id), "keep waiting")] : task.status === "done" ? [nextCall(steps.ready(), "tasks it unblocked may be ready now")] : [];
    return { data: { ...reply.data, final: !r.timedOut, waited_ms: r.waitedMs }, text: reply.text, next };
  },
});

export const watchTool = defineTool({
  name: "watch",
  title: "Wait for work",
  description: [
    "Block until a task is ready for you to claim, or about 50 seconds pass. Returns at once when work is already ready.",
    "With claim: true it also claims the best ready task for you, atomically, and returns it in `claimed`; otherwise call claim_task or claim_next yourself.",
    "If `timed_out` is true nothing became ready: call watch again, or stop if you are done for the session.",
    "Use it when you are idle and ready_tasks is empty, instead of polling ready_tasks.",
  ].join("\n"),
  input: {
    claim: z.optional(describe(z.boolean(), "claim the best ready task as soon as there is one (default false)")),
    ttl: ttl(),
    timeout_seconds: waitSeconds(),
  },
  output: { ready: z.array(Task), ready_total: z.number(), claimed: z.nullable(Task), timed_out: z.boolean(), waited_ms: z.number() },
  annotations: { readOnlyHint: false, openWorldHint: false },
  async run(a, ctx) {
    let stamp = "";
    let recheckAt = 0;
    const r = await pollUntil(ctx, boundFor(ctx, a.timeout_seconds), async () => {
      const store = await ctx.session.store();
      // Reading every task is the costly part: do it only when a task ref moved or a lease ran out.
      const tips = (await store.listRefs(TASKS_PREFIX)).map((t) => `${t.name} ${t.oid}`).join("\n");
      if (tips === stamp && Date.now() < recheckAt) return null;
      stamp = tips;
      const { tasks } = await listTasks(store, { settled: false });
      const now = store.now();
      const expiries = tasks.filter((t) => t.status === "claimed" && t.claim).map((t) => Date.parse(t.claim!.expires_at));
      recheckAt = Date.now() + Math.max(0, Math.min(Infinity, ...expiries.filter((e) => e > now.getTime())) - now.getTime());
      const ready = readyTasks(tasks, now); // blocked tasks are not ready
      if (!ready.length) return null;
      if (!a.claim) return { ready, claimed: null };
      try {
        const claimed = await claimNextTask(store, a.ttl !== undefined ? { ttl: a.ttl } : {});
        return { ready: ready.filter((t) => t.id !== claimed.id), claimed };
      } catch (e) {
        if (e instanceof HandoffError && e.code === "no_task_ready") return null; // others took them all first
        throw e;
      }
    });
    const store = await ctx.session.store();
    const ready = r.value?.ready ?? [];
    const claimed = r.value?.claimed ?? null;
    const shown = ready.slice(0, 5);
    const text = claimed
      ? taskReply(store, claimed, `claimed ${claimed.id} (fence ${claimed.claim?.fence}) until ${claimed.claim?.expires_at}`).text
      : r.timedOut
        ? `nothing became ready in ${Math.round(r.waitedMs / 1000)}s; call watch again to keep waiting`
        : `ready to claim (${ready.length}):\n${taskLines(store, shown, "")}`;
    const summary = claimed ? `claimed ${claimed.id} (fence ${claimed.claim?.fence}) until ${claimed.claim?.expires_at}` : r.timedOut ? `nothing became ready in ${Math.round(r.waitedMs / 1000)}s` : `${ready.length} ready to claim, best ${ready[0]!.id}`;
    const next = claimed ? [nextCall(steps.done(claimed.id), "when committed")] : r.timedOut ? [{ tool: "watch", why: "keep waiting for work" }] : [nextCall(steps.claim(ready[0]!.id), "the best ready task"), nextCall(steps.claimNext(), "take the best one, whichever it is then")];
    return { data: { ready: shown, ready_total: ready.length, claimed, timed_out: r.timedOut, waited_ms: r.waitedMs }, text, summary, next };
  },
});

export const WAIT_TOOLS = [waitTask, watchTool];
