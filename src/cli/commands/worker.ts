import type { Command } from "commander";
import { parseDuration } from "../../core/duration.ts";
import { EXIT_CODES, fail } from "../../core/errors.ts";
import { neutralise } from "../../present/untrusted.ts";
import { runWorker } from "../../work/worker.ts";
import { parseInteger, withGlobals, withStore } from "../context.ts";

interface WorkerOpts {
  exec?: string;
  once?: boolean;
  concurrency: string;
  poll: string;
  keep?: boolean;
  pushBranch?: boolean;
  ttl?: string;
}

export function registerWorker(program: Command): void {
  withGlobals(
    program
      .command("worker")
      .description("take tasks addressed to this agent and run a command for each: its stdout is the output, files in $HANDOFF_OUT_DIR come back")
      .option("--exec <cmd>", "the command to run per task, in a fresh worktree; it gets HANDOFF_TASK_ID, HANDOFF_TASK_FILE, HANDOFF_OUT_DIR, HANDOFF_IN_DIR")
      .option("--once", "run one task, then exit")
      .option("--concurrency <n>", "tasks run at once", "1")
      .option("--poll <duration>", "how often to look for tasks and cancellations", "1s")
      .option("--ttl <duration>", "lease length of each claim (renewed at a third of it; default claim_ttl)")
      .option("--keep", "keep each task's worktree and folder (their paths are printed)")
      .option("--push-branch", "send code changes back as the branch handoff/<id> on the sync remote (uncommitted changes are committed)"),
    { writes: true },
  ).action(async (o: WorkerOpts, cmd: Command) => {
    if (!o.exec?.trim()) fail("usage", "worker needs --exec CMD: the command that does each task");
    const concurrency = parseInteger(o.concurrency, "--concurrency", 1, 64);
    const pollMs = parseDuration(o.poll, "--poll");
    if (o.ttl !== undefined) parseDuration(o.ttl, "--ttl");
    await withStore(cmd, async (store) => {
      // Claims, renewals and results go out at once: someone is waiting on them.
      store.syncOptions = { ...store.syncOptions, push: true };
      const stop = new AbortController();
      let interrupted = false;
      const onSignal = () => {
        if (interrupted) process.exit(130);
        interrupted = true;
        process.stderr.write("git-handoff: stopping: releasing the tasks in progress (Ctrl-C again to quit at once)\n");
        stop.abort();
      };
      process.on("SIGINT", onSignal);
      process.on("SIGTERM", onSignal);
      try {
        const s = await runWorker(store, {
          command: o.exec!,
          once: !!o.once,
          concurrency,
          pollMs,
          keep: !!o.keep,
          pushBranch: !!o.pushBranch,
          ...(o.ttl !== undefined ? { ttl: o.ttl } : {}),
          signal: stop.signal,
          // Lines quote task text from other machines: neutralised for the terminal.
          log: (line) => process.stderr.write(`git-handoff: ${neutralise(line)}\n`),
          stderr: (chunk) => process.stderr.write(chunk),
        });
        process.stderr.write(`git-handoff: worker stopped: ${s.done} done, ${s.failed} failed, ${s.cancelled} cancelled, ${s.released} released\n`);
        if (interrupted) process.exitCode = EXIT_CODES.interrupted;
      } finally {
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
      }
    });
  });
}
