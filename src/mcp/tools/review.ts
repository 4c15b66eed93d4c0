// Finishing work and the review gate: complete_task runs the task's verification as `done` does,
// and the review queue's accept / reject. Each calls the same store function as the CLI verb.
import * as z from "zod/mini";
import { Verification } from "../../core/review-record.ts";
import { reviewItemText } from "../../present/render-review.ts";
import { nextCall, steps } from "../../present/suggestions.ts";
import { unblockedText } from "../../store/dependency-actions.ts";
import { accept, listReview, reject } from "../../store/review-actions.ts";
import { done } from "../../store/task-actions.ts";
import { showTask } from "../../store/task-store.ts";
import { startVerificationRun } from "../../store/verification-runs.ts";
import { fail } from "../../core/errors.ts";
import { completeWithResults } from "../../work/complete.ts";
import { ShownTask, Task } from "../schemas.ts";
import { defineTool } from "../tool.ts";
import { awaitVerdict, verdictReply, verifyingReply } from "../verification.ts";
import { describe, taskId, taskReply } from "./common.ts";

const WRITE = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;
const opt = <T>(key: string, v: T | undefined) => (v === undefined ? {} : { [key]: v });
const HELD = "`held_by_other`: another agent holds it (data.holder until data.expires_at): do not finish its work; take other work (claim_next).";

export const completeTaskTool = defineTool({
  name: "complete_task",
  title: "Complete a task",
  description: [
    "Finish a task. Call it when the work is committed: pass `commit` (a revision such as HEAD) and a short `note` for whoever reads the task next. Allowed for the holder, or for anyone while nobody holds the task.",
    "When someone waits on the task (it was handed to you with `git handoff wait` or create_task `to`), pass your answer as `output` and the files you made as `files`: they go back in the same push. An `output` whose first line is `FAILED: reason` marks the task failed.",
    "A task without a verify command becomes done (state `done`). A task with one (create_task `verify`) goes through the review gate, exactly as the CLI's `done`: its command runs in your worktree; passed -> the task goes to review (state `review`, a reviewer accepts or rejects it); failed -> refusal `verification_failed`, the result is recorded and you keep the task.",
    "A verification that takes longer than about 50 seconds does not block the call: it keeps running in a separate process and the call returns with state `verifying` and `final: false`. Then call wait_task with the same id: it returns the verdict as complete_task would have (`final: true`), or `final: false` again while it still runs. Calling complete_task again meanwhile starts nothing new.",
    `Refusals: \`verification_failed\`: data.verification.output_tail has the end of the output; fix the work and call complete_task again, or release_task. ${HELD} \`final_state\`: it is already finished. \`wrong_state\`: it is already in review. \`invalid_input\`: e.g. the commit does not exist. \`unapproved_command\`: the verify command was not written or approved in this clone; only a person can approve it (CLI), so ask them, or release_task.`,
  ].join("\n"),
  input: {
    id: taskId(),
    commit: z.optional(describe(z.string(), "the commit that does the work, any revision git understands (HEAD, a sha, a branch)")),
    note: z.optional(describe(z.string(), "what the next reader should know (at most 8000 characters)")),
    output: z.optional(describe(z.string(), "your answer for whoever waits on the task (wait_task / git handoff wait returns it; at most 256 KB); start it with `FAILED: reason` and the task fails with that reason")),
    files: z.optional(describe(z.array(z.string()), "result files sent back with it, paths relative to the repository root and inside it (not under .git, not through a symlink out of it; they arrive by name under ./handoff-<id>/: flat names, at most 25 MB together)")),
  },
  output: {
    // `verifying`: the task as it stands now (get_task's view: another agent's claim inside the takeover grace has grace_until).
    task: ShownTask,
    state: z.enum(["done", "review", "verifying", "failed"]),
    final: z.boolean(),
    verification: Verification,
    waited_ms: z.number(),
    run: z.object({ started_at: z.string(), pid: z.nullable(z.number()), command: z.nullable(z.string()) }),
  },
  annotations: WRITE,
  async run(a, ctx) {
    const store = await ctx.session.store();
    const task = await showTask(store, a.id);
    const o = { ...opt("commit", a.commit), ...opt("note", a.note) };
    if (a.output !== undefined || a.files?.length) {
      if (task.verify) fail("invalid_input", `task ${task.id} has a verify command: it goes through review; complete it without output or files`);
      const t = await completeWithResults(store, task.id, { output: a.output ?? "", files: a.files ?? [], ...opt("commit", a.commit) });
      const reply = taskReply(store, t, `${t.status} ${t.id}; ${a.files?.length ?? 0} result file${a.files?.length === 1 ? "" : "s"} sent back`);
      return { ...reply, data: { ...reply.data, state: t.status === "done" ? "done" : "failed", final: true }, next: [nextCall(steps.claimNext(), "take the next task")] };
    }
    if (!task.verify) {
      const t = await done(store, a.id, o);
      const freed = (await unblockedText(store, t.id)).trim(); // as the CLI's done prints it
      const reply = taskReply(store, t, `done ${t.id}${freed ? `; ${freed}` : ""}`);
      return { ...reply, data: { ...reply.data, state: "done", final: true }, next: [nextCall(steps.claimNext(), freed ? "take the next task; the ones it unblocked are ready now" : "take the next task")] };
    }
    const run = startVerificationRun(store, a.id, o, ctx.session.runner(store));
    const { run: verdict, waitedMs } = await awaitVerdict(ctx, store, run, ctx.session.waitBoundMs);
    if (verdict) return verdictReply(store, verdict, waitedMs);
    return verifyingReply(store, await showTask(store, a.id), run, waitedMs);
  },
});

const ReviewItem = z.object({
  task: z.string(),
  objective: z.string(),
  submitted_by: z.string(),
  submitted_at: z.string(),
  commit: z.nullable(z.string()),
  diff: z.nullable(z.record(z.string(), z.unknown())),
  verification: z.nullable(Verification),
});

export const reviewQueueTool = defineTool({
  name: "review_queue",
  title: "Work awaiting review",
  description: [
    "The tasks whose verification passed and that wait for a reviewer, oldest first: who submitted them, the commit, a diff summary and the verification (command, exit code, output tail).",
    "Call it when you review others' work; then accept_review or reject_review each one. Not needed to finish your own work (complete_task puts it here).",
  ].join("\n"),
  input: {},
  output: { items: z.array(ReviewItem), total: z.number(), problems: z.array(z.string()) },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(_a, { session }) {
    const store = await session.store();
    const { items, problems } = await listReview(store);
    const summary = items.length ? `${items.length} task${items.length === 1 ? "" : "s"} await review: ${items.map((i) => i.task).join(", ")}` : "nothing awaits review";
    return {
      data: { items, total: items.length, problems },
      text: (items.length ? items.map(reviewItemText).join("\n\n") : "nothing awaits review") + problems.map((p) => `\nwarning: ${p}`).join(""),
      summary,
      next: items.length ? [nextCall(steps.accept(items[0]!.task), "accept it: it becomes done"), nextCall(steps.reject(items[0]!.task), "reject it: back to todo with your reason")] : [],
    };
  },
});

export const acceptReviewTool = defineTool({
  name: "accept_review",
  title: "Accept reviewed work",
  description: [
    "Accept a task in review: it becomes done, with your optional comment; tasks waiting on it become ready.",
    "Call it after reading the item in review_queue (commit, diff, verification output). To send it back instead, reject_review.",
    "Refusals: `wrong_state`: it is not in review (see review_queue). `not_found`: check the id.",
  ].join("\n"),
  input: { id: taskId(), reason: z.optional(describe(z.string(), "a comment recorded with the decision (at most 8000 characters)")) },
  output: { task: Task },
  annotations: WRITE,
  async run(a, { session }) {
    const store = await session.store();
    const t = await accept(store, a.id, a.reason ?? null);
    const freed = (await unblockedText(store, t.id)).trim();
    return { ...taskReply(store, t, `accepted ${t.id}: done${freed ? `; ${freed}` : ""}`), next: [nextCall(steps.review(), "the next item awaiting review")] };
  },
});

export const rejectReviewTool = defineTool({
  name: "reject_review",
  title: "Reject reviewed work",
  description: [
    "Reject a task in review: it goes back to todo with your reason attached, for its author or anyone to claim again.",
    "Say what to fix in `reason`: it is what the next claimer reads. To approve instead, accept_review.",
    "Refusals: `wrong_state`: it is not in review (see review_queue). `not_found`: check the id.",
  ].join("\n"),
  input: { id: taskId(), reason: describe(z.string(), "what to fix (at most 8000 characters)") },
  output: { task: Task },
  annotations: WRITE,
  async run(a, { session }) {
    const store = await session.store();
    const t = await reject(store, a.id, a.reason);
    return { ...taskReply(store, t, `rejected ${t.id}: back to todo (${a.reason})`), next: [nextCall(steps.review(), "the next item awaiting review")] };
  },
});

export const REVIEW_TOOLS = [completeTaskTool, reviewQueueTool, acceptReviewTool, rejectReviewTool];
