// Tools over claims: each calls the same function in store/task-actions.ts as the CLI verb.
import * as z from "zod/mini";
import { cancel, claimNextReporting, claimReporting, failWith, reclaim, release, renew, type ClaimReport } from "../../store/task-actions.ts";
import type { Task as TaskT } from "../../core/task.ts";
import { passedOverNote } from "../../present/newer-note.ts";
import { nextCall, steps, type NextCall } from "../../present/suggestions.ts";
import { Task } from "../schemas.ts";
import { defineTool } from "../tool.ts";
import { describe, taskId, taskReply, ttl } from "./common.ts";

const HELD =
  "`held_by_other` means another agent holds it: data.holder holds it until data.expires_at. Do not work on it. Take other work (claim_next), wait for it (wait_task), or ask the holder; do not reclaim just to get ahead.";
const WRITE = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;
const opt = <T>(key: string, v: T | undefined) => (v === undefined ? {} : { [key]: v });

const OVERLAPS =
  "`overlaps` (advisory, nothing is blocked) lists other live tasks and other agents' leases the claimed scope meets: `warn` when both name the same file or the patterns are identical (coordinate before editing it), `info` for any other intersection; `unchecked: true` (warn) when a lease set of very costly globs spent the matching budget one claim may use before it was looked at: it may overlap.";
const CAPACITY =
  "`at_capacity`: you already hold as many tasks as your capacity (the repository's max_concurrent, or what a person declared with the CLI's session start --capacity): finish or release one first, or pass over_capacity: true when you really mean to hold one more.";
const overCapacity = () => z.optional(describe(z.boolean(), "claim even though you already hold as many tasks as your capacity"));

/** The claim's answer: the task, the overlaps it meets, and what to do next. */
function claimReply(store: Parameters<typeof taskReply>[0], r: ClaimReport) {
  const t = r.task;
  const near = r.overlaps.length ? `; overlaps ${r.overlaps.map((o) => `${o.verdict} ${o.pattern} (${o.agent}${o.task ? `, ${o.task}` : ""}${o.unchecked ? ", not looked at: the budget of glob matching ran out" : ""})`).join(", ")}` : "";
  const reply = taskReply(store, t, `claimed ${t.id} (fence ${t.claim?.fence}) until ${t.claim?.expires_at}${near}`);
  // As the CLI's claim --next: how many ready tasks it passed over as held back as newer.
  const skipped = r.skipped_newer ? { skipped_newer: r.skipped_newer } : {};
  return { ...reply, text: reply.text + (r.skipped_newer ? `\n${passedOverNote(r.skipped_newer)}` : ""), data: { ...reply.data, overlaps: r.overlaps, ...skipped }, next: afterClaim(t) };
}

/** What a new holder does next: read what it builds on, keep the lease, finish. */
function afterClaim(t: TaskT): NextCall[] {
  return [
    ...((t.after ?? []).length ? [nextCall(steps.inbox(), "the handoffs of the tasks this one waited on")] : []),
    nextCall(steps.renew(t.id), `before ${t.claim?.expires_at ?? "the lease ends"}, if the work takes longer`),
    nextCall(steps.done(t.id), t.verify ? `when committed: runs ${t.verify} and sends it to review` : "when committed"),
  ];
}

export const claimTaskTool = defineTool({
  name: "claim_task",
  title: "Claim a task",
  description: [
    "Claim a task for yourself, atomically (compare-and-swap on the task's ref): only one agent can hold it. The claim is a lease that ends at claim.expires_at unless you renew it.",
    "Call it before you start working on a task. Claiming a task you already hold renews it. Returns the task; claim.fence identifies your grant.",
    `Refusals: ${HELD} \`final_state\`: it is already done, failed or cancelled. \`lost_race\`: retry the call. \`not_found\`: check the id.`,
    "`blocked` (recoverable): a task it waits on is not done yet; the message names each edge and who holds the blocker: take other work (claim_next) or wait. `wrong_state`: it is in review.",
    CAPACITY,
    OVERLAPS,
  ].join("\n"),
  input: { id: taskId(), ttl: ttl(), over_capacity: overCapacity() },
  output: { task: Task, overlaps: z.optional(z.array(z.record(z.string(), z.unknown()))) },
  annotations: { ...WRITE, idempotentHint: true },
  async run(a, { session }) {
    const store = await session.store();
    return claimReply(store, await claimReporting(store, a.id, { ...opt("ttl", a.ttl), overCapacity: !!a.over_capacity }));
  },
});

export const claimNextTool = defineTool({
  name: "claim_next",
  title: "Claim the next ready task",
  description: [
    "Claim the best ready task (highest priority, then oldest) atomically; if another agent takes it first, the next one is tried. Tasks whose dependencies are not done yet are skipped.",
    "Use it when you just want the next piece of work. Returns the task you now hold. A task whose claim would write a ref the sync remote holds from a newer git-handoff (kept back here: the task, or the lease set its scope needs) cannot be claimed here and is passed over: `skipped_newer` counts them.",
    "Refusal `no_task_ready` (recoverable): nothing is free. Call watch to wait for work, or do something else.",
    CAPACITY,
    OVERLAPS,
  ].join("\n"),
  input: { ttl: ttl(), over_capacity: overCapacity() },
  output: { task: Task, overlaps: z.optional(z.array(z.record(z.string(), z.unknown()))), skipped_newer: z.optional(z.number()) },
  annotations: { ...WRITE, idempotentHint: false },
  async run(a, { session }) {
    const store = await session.store();
    return claimReply(store, await claimNextReporting(store, { ...opt("ttl", a.ttl), overCapacity: !!a.over_capacity }));
  },
});

export const renewTaskTool = defineTool({
  name: "renew_task",
  title: "Renew a claim",
  description: [
    "Extend your lease on a task you hold: it then ends `ttl` from now (default: the length you claimed it with).",
    "Call it while the work takes longer than the lease, e.g. when half of the lease has passed. Not needed for tasks you are about to complete.",
    `Refusals: ${HELD} If your lease ran out and someone took the task, stop working on it: your fence is stale. \`not_holder\`: you do not hold it (claim it first).`,
  ].join("\n"),
  input: { id: taskId(), ttl: ttl() },
  output: { task: Task },
  annotations: { ...WRITE, idempotentHint: true },
  async run(a, { session }) {
    const store = await session.store();
    const t = await renew(store, a.id, opt("ttl", a.ttl));
    return taskReply(store, t, `renewed ${t.id} until ${t.claim?.expires_at}`);
  },
});

export const releaseTaskTool = defineTool({
  name: "release_task",
  title: "Release a claim",
  description: [
    "Give a task you hold back to the pool, unfinished, so another agent can claim it.",
    "Use it when you stop working on a task without finishing it (handing over, switching work). For finished work call complete_task; for a dead end call fail_task.",
    `Refusals: ${HELD} \`not_holder\`: you do not hold it, nothing to release.`,
  ].join("\n"),
  input: { id: taskId() },
  output: { task: Task },
  annotations: WRITE,
  async run(a, { session }) {
    const store = await session.store();
    const t = await release(store, a.id);
    return { ...taskReply(store, t, `released ${t.id}`), next: [nextCall(steps.claimNext(), "take other work")] };
  },
});

export const failTaskTool = defineTool({
  name: "fail_task",
  title: "Fail a task",
  description: [
    "Mark a task failed, with the reason: when it cannot be done as stated (blocked, wrong premise, not reproducible). The reason is what the next reader sees.",
    "If the task can still be done by someone else, call release_task instead.",
    `Refusals: ${HELD} \`final_state\`: it is already finished.`,
  ].join("\n"),
  input: { id: taskId(), reason: describe(z.string(), "why the task failed") },
  output: { task: Task },
  annotations: WRITE,
  async run(a, { session }) {
    const store = await session.store();
    const t = await failWith(store, a.id, a.reason);
    return { ...taskReply(store, t, `failed ${t.id}`), next: [nextCall(steps.claimNext(), "take other work")] };
  },
});

export const reclaimTaskTool = defineTool({
  name: "reclaim_task",
  title: "Reclaim a task from its holder",
  description: [
    "Force-release another agent's live claim, with a logged reason; the task goes back to todo (claim it afterwards if you will do it).",
    "Only when the holder is gone or stuck and asking did not help. An expired lease needs no reclaim: just claim_task it.",
    "Refusals: `not_holder`: the task is not claimed, nothing to reclaim. `final_state`: it is already finished.",
  ].join("\n"),
  input: { id: taskId(), reason: describe(z.string(), "why the holder's claim is being overridden (recorded in the history)") },
  output: { task: Task },
  annotations: { ...WRITE, destructiveHint: true },
  async run(a, { session }) {
    const store = await session.store();
    const t = await reclaim(store, a.id, a.reason);
    return { ...taskReply(store, t, `reclaimed ${t.id}`), next: [nextCall(steps.claim(t.id), "if you will do it yourself")] };
  },
});

export const cancelTaskTool = defineTool({
  name: "cancel_task",
  title: "Cancel a task",
  description: [
    "Cancel a task that is no longer wanted (obsolete, duplicate, out of scope), with the reason. Allowed while nobody else holds it, and to the task's creator even while another agent holds it (that agent then stops).",
    "Not for work that failed (fail_task) or that you merely stop doing (release_task).",
    `Refusals: ${HELD} \`final_state\`: it is already finished.`,
  ].join("\n"),
  input: { id: taskId(), reason: describe(z.string(), "why the task is cancelled") },
  output: { task: Task },
  annotations: { ...WRITE, destructiveHint: true },
  async run(a, { session }) {
    const store = await session.store();
    const t = await cancel(store, a.id, a.reason);
    return taskReply(store, t, `cancelled ${t.id}`);
  },
});

export const CLAIM_TOOLS = [
  claimTaskTool,
  claimNextTool,
  renewTaskTool,
  releaseTaskTool,
  failTaskTool,
  reclaimTaskTool,
  cancelTaskTool,
];
