import type { Command } from "commander";
import { fail, HandoffError } from "../../core/errors.ts";
import type { Task } from "../../core/task.ts";
import type { Store } from "../../store/store.ts";
import { cancel, done, failWith, reclaim, release, renew } from "../../store/task-actions.ts";
import { withGlobals, withStore } from "../context.ts";
import { verbCommand } from "../verb-command.ts";
import { CLAIM } from "./claim-task.ts";
import { removeCorruptTask } from "../../store/remove-corrupt.ts";
import { emit, isTerminal } from "../../present/output.ts";
import { taskDetail } from "../../present/render.ts";
// verification and review, unblocked dependents, handoffs delivered with a lifecycle verb
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

function requireReason(reason: string | undefined, verb: string): string {
  if (reason === undefined) fail("usage", `${verb} needs --reason TEXT`);
  return reason;
}

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
