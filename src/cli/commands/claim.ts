import type { Command } from "commander";
import { fail, HandoffError } from "../../core/errors.ts";
import type { Task } from "../../core/task.ts";
import type { Store } from "../../store/store.ts";
import { cancel, claimNextReporting, claimReporting, done, failWith, reclaim, release, renew, type ClaimReport } from "../../store/task-actions.ts";
import { overlapText } from "../../core/claim-overlap.ts";
import { withGlobals, withStore, withStoreFor } from "../context.ts";
import { verb, verbCommand } from "../verb-command.ts";
import { removeCorruptTask } from "../../store/remove-corrupt.ts";
import { emit, isTerminal } from "../../present/output.ts";
import { taskDetail } from "../../present/render.ts";
import { passedOverNote } from "../../present/newer-note.ts";
// verification and review, unblocked dependents, handoffs delivered with a claim
import { unblockedText } from "../../store/dependency-actions.ts";
import { doneWithVerification, taskVerifyCommand } from "../../store/review-actions.ts";
import { taskExtrasText, verificationDetail, verifyText } from "../../present/render-tasks.ts";
import { approvalOf } from "../../store/approvals.ts";
import { deliveredWithClaim } from "./handoff.ts";
import { verificationFailure } from "../../present/suggestions.ts";

/** Every lifecycle verb prints the task as it now stands. */
function run(cmd: Command, fn: (store: Store) => Promise<Task>, summary: (t: Task) => string, opts: { deliver?: boolean } = {}) {
  return withStore(cmd, async (store, g) => {
    const t = await fn(store);
    // A claim delivers the handoffs of the tasks it waits on, in the text output.
    const delivered = opts.deliver && !g.json && t.status === "claimed" ? await deliveredWithClaim(store, t) : "";
    // Whoever claims a task sees the command done will run, and who wrote it.
    const verify = opts.deliver && t.verify ? `\n${verifyText(t, !!(await approvalOf(store, t.verify)))}` : "";
    emit(!!g.json, t, () => `${summary(t)}\n${taskDetail(t, store.now())}${verify}${delivered}`);
  });
}

/** What a claim prints: the task, what came with it, and the work its scope meets (advisory). */
export async function emitClaim(store: Store, json: boolean, r: ClaimReport): Promise<void> {
  const t = r.task;
  const delivered = json ? "" : await deliveredWithClaim(store, t);
  const near = r.overlaps.length ? `\noverlaps (advisory, nothing is blocked):\n${r.overlaps.map((o) => `  ${overlapText(o)}`).join("\n")}` : "";
  // Whoever claims a task sees the command done will run, and who wrote it.
  const verify = t.verify ? `\n${verifyText(t, !!(await approvalOf(store, t.verify)))}` : "";
  const skipped = r.skipped_newer ? `\n${passedOverNote(r.skipped_newer)}` : "";
  emit(json, { ...t, overlaps: r.overlaps, ...(r.skipped_newer ? { skipped_newer: r.skipped_newer } : {}) }, () => `claimed ${t.id} (fence ${t.claim?.fence})${near}\n${taskDetail(t, store.now())}${verify}${delivered}${skipped}`);
}

function requireReason(reason: string | undefined, verb: string): string {
  if (reason === undefined) fail("usage", `${verb} needs --reason TEXT`);
  return reason;
}

/** `claim <id>` or `claim --next`. */
export const CLAIM = verb<[string | undefined], { next?: boolean; ttl?: string; force?: boolean; overCapacity?: boolean }>(
  {
    words: ["claim"],
    description: "claim a task for the calling agent (compare-and-swap; exit 3 if someone else holds it)",
    args: [["[id]", "the task to claim"]],
    options: [
      { flags: "--next", description: "claim the best ready task: highest priority, then oldest" },
      { flags: "--ttl <duration>", description: "lease length, like 90s, 10m, 2h (default 30m or claim_ttl in .handoff.yaml)" },
      { flags: "--force", description: "claim even though a task it waits on is not done" },
      { flags: "--over-capacity", description: "claim even though this agent already holds as many tasks as its capacity (max_concurrent, or session start --capacity)" },
    ],
    globals: { writes: true, values: { id: "task" } },
  },
  async ([id], o) => {
    if (id !== undefined && o.next) fail("usage", "give a task id or --next, not both");
    if (id === undefined && !o.next) fail("usage", "give a task id, or --next for the best ready task");
    const opts = { ...(o.ttl !== undefined ? { ttl: o.ttl } : {}), overCapacity: !!o.overCapacity };
    await withStoreFor(o, async (store, g) => {
      const r = id === undefined ? await claimNextReporting(store, opts) : await claimReporting(store, id, { ...opts, force: !!o.force });
      await emitClaim(store, !!g.json, r);
    });
  },
);

export function registerClaim(program: Command, verb?: string): void {
  const wants = (name: string) => verb === undefined || verb === name;
  if (wants("claim")) verbCommand(program, CLAIM);

  if (wants("renew")) withGlobals(
    program
      .command("renew")
      .description("extend your lease on a task")
      .argument("<id>")
      .option("--ttl <duration>", "new lease length from now (default: the claim's)"),
    { writes: true, values: { id: "task" } },
  ).action(async (id: string, o: { ttl?: string }, cmd: Command) => {
    await run(cmd, (s) => renew(s, id, o.ttl !== undefined ? { ttl: o.ttl } : {}), (t) => `renewed ${t.id}`);
  });

  if (wants("release")) withGlobals(program.command("release").description("give a task you hold back to the pool").argument("<id>"), { writes: true, values: { id: "task" } }).action(
    async (id: string, _o, cmd: Command) => {
      await run(cmd, (s) => release(s, id), (t) => `released ${t.id}`);
    },
  );

  if (wants("done")) withGlobals(
    program
      .command("done")
      .description("mark a task you hold (or nobody holds) as done; with a verify command it runs it and sends the task to review")
      .argument("<id>")
      .option("--commit <rev>", "the commit that does the work")
      .option("--note <text>", "what a reader should know")
      .option("--verify [cmd]", "run CMD (default: the task's own verify command) in this worktree: passed -> review, failed -> recorded, exit 3")
      .option("--no-verify", "skip the task's own verify command and mark it done"),
    { writes: true, values: { id: "task" } },
  ).action(async (id: string, o: { commit?: string; note?: string; verify?: string | boolean }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const verifyWith = o.verify === false ? null : typeof o.verify === "string" ? o.verify : o.verify === true || (await taskVerifyCommand(store, id)) ? undefined : null;
      if (verifyWith === null) {
        const t = await done(store, id, o);
        const freed = g.json ? "" : await unblockedText(store, t.id);
        emit(!!g.json, t, () => `done ${t.id}${freed}\n${taskDetail(t, store.now())}`);
        return;
      }
      const t = await doneWithVerification(store, id, {
        ...(verifyWith !== undefined ? { command: verifyWith } : {}),
        ...(o.commit !== undefined ? { commit: o.commit } : {}),
        ...(o.note !== undefined ? { note: o.note } : {}),
        // A person at a terminal sees the output as it comes, not only when the command ends.
        ...(isTerminal(2) ? { onOutput: (b: Buffer) => void process.stderr.write(b) } : {}),
      });
      const v = t.review!.verification!;
      if (!v.passed) {
        if (!g.json) process.stdout.write(`${verificationDetail(v)}\n`);
        throw new HandoffError(verificationFailure(t, "cli"));
      }
      emit(!!g.json, t, () => `${t.id} is in review (verification passed in ${(v.duration_ms / 1000).toFixed(1)}s)\n${taskDetail(t, store.now())}${taskExtrasText(t, [])}`);
    });
  });

  if (wants("fail")) withGlobals(program.command("fail").description("mark a task you hold as failed").argument("<id>").option("--reason <text>", "why"), { writes: true, values: { id: "task" } }).action(
    async (id: string, o: { reason?: string }, cmd: Command) => {
      const reason = requireReason(o.reason, "fail");
      await run(cmd, (s) => failWith(s, id, reason), (t) => `failed ${t.id}`);
    },
  );

  if (wants("reclaim")) withGlobals(
    program.command("reclaim").description("force-release another agent's claim (logged)").argument("<id>").option("--reason <text>", "why"),
    { writes: true, values: { id: "task" } },
  ).action(async (id: string, o: { reason?: string }, cmd: Command) => {
    const reason = requireReason(o.reason, "reclaim");
    await run(cmd, (s) => reclaim(s, id, reason), (t) => `reclaimed ${t.id}`);
  });

  if (wants("cancel")) withGlobals(
    program
      .command("cancel")
      .description("cancel a task nobody holds, you hold, or you created (its holder then stops)")
      .argument("<id>")
      .option("--reason <text>", "why")
      .option("--force", "remove a task whose ref is corrupt (objects missing); logged in refs/handoff-local/repair-log"),
    { writes: true, values: { id: "task" } },
  ).action(async (id: string, o: { reason?: string; force?: boolean }, cmd: Command) => {
    const reason = requireReason(o.reason, "cancel");
    await withStore(cmd, async (store, g) => {
      const r = o.force ? await removeCorruptTask(store, id, reason) : null;
      if (r) return emit(!!g.json, r, () => `removed corrupt task ${r.id} (${r.ref} was ${r.removed}; logged in refs/handoff-local/repair-log)`);
      const t = await cancel(store, id, reason);
      emit(!!g.json, t, () => `cancelled ${t.id}\n${taskDetail(t, store.now())}`);
    });
  });
}
