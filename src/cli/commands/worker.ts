import type { Command } from "commander";
import { parseDuration } from "../../core/duration.ts";
import { EXIT_CODES, fail } from "../../core/errors.ts";
import { neutralise } from "../../present/untrusted.ts";
import { handoffCommand } from "../../core/shell-quote.ts";
import { localMachine } from "../../store/machine.ts";
import { FreshStore } from "../../store/fresh-store.ts";
import { openSyncedStore } from "../../sync/open.ts";
import { agentClient, AGENT_CLIENTS, fullAccessWarning } from "../../work/agent-command.ts";
import { catchInterrupts } from "../../work/interrupts.ts";
import { runWorker } from "../../work/worker.ts";
import { parseInteger, startDir, withGlobals, withStore } from "../context.ts";
import { resolveExec } from "../../work/exec-command.ts";

interface WorkerOpts {
  exec?: string;
  with?: string;
  fullAccess?: boolean;
  once?: boolean;
  concurrency: string;
  poll: string;
  keep?: boolean;
  pushBranch?: boolean;
  addressedOnly?: boolean;
  ttl?: string;
}

export function registerWorker(program: Command): void {
  withGlobals(
    program
      .command("worker")
      .description("take tasks addressed to this agent or to anyone and run a command for each: its stdout is the output, files in $HANDOFF_OUT_DIR come back; a task with a verify command goes to review")
      .option("--exec <cmd>", "the command to run per task, in a fresh worktree (a relative path as its first word, ./do-task.sh, is taken from where the worker starts); it gets HANDOFF_TASK_ID, HANDOFF_TASK_FILE, HANDOFF_OUT_DIR, HANDOFF_IN_DIR, and HANDOFF_REJECTION (the reviewer's reason) for a task rejected in review")
      .option("--with <client>", "run an agent client on each task instead: claude (claude -p, edits accepted) or codex (codex exec, workspace-write sandbox); the agent is named <client>@<machine> unless --agent")
      .option("--full-access", "with --with: let the client bypass its permission prompts and sandbox (a warning says what that gives away)")
      .option("--addressed-only", "take only tasks addressed to this agent (--to), not those addressed to anyone")
      .option("--once", "run one task, then exit")
      .option("--concurrency <n>", "tasks run at once", "1")
      .option("--poll <duration>", "how often to look for tasks and cancellations", "1s")
      .option("--ttl <duration>", "lease length of each claim (renewed at a third of it; default claim_ttl)")
      .option("--keep", "keep each task's worktree and folder (their paths are printed)")
      .option("--push-branch", "send code changes back as the branch handoff/<id> on the sync remote (uncommitted changes are committed)"),
    { writes: true, values: { "--with": AGENT_CLIENTS } },
  ).action(async (o: WorkerOpts, cmd: Command) => {
    if (o.with !== undefined && o.exec !== undefined) fail("usage", "give --exec CMD or --with CLIENT, not both");
    if (o.with === undefined && !o.exec?.trim()) fail("usage", "worker needs --exec CMD (the command that does each task) or --with claude|codex");
    if (o.fullAccess && o.with === undefined) fail("usage", "--full-access goes with --with claude|codex");
    const client = o.with === undefined ? null : agentClient(o.with, "--exec CMD");
    const concurrency = parseInteger(o.concurrency, "--concurrency", 1, 64);
    if (o.once && concurrency > 1) fail("usage", "--once runs one task: --concurrency goes without it");
    const pollMs = parseDuration(o.poll, "--poll");
    if (o.ttl !== undefined) parseDuration(o.ttl, "--ttl");
    // Once, at start: the folder it was started in (or -C), not each task's worktree.
    const command = o.exec !== undefined ? resolveExec(o.exec, startDir(cmd), { option: "--exec", starter: "the worker" }) : "";
    await withStore(cmd, async (opened, g) => {
      // `--with` names the worker after the client and the machine unless --agent says otherwise.
      const agent = client && g.agent === undefined ? `${client}@${await localMachine(opened)}` : opened.actor.agent;
      // The worker runs for hours: each step takes its Store from here, reopened when the policy or
      // the git config changed (fresh-store.ts). A Store replaced stays open for ten minutes, more
      // than one step (a bounded remote call, a completion) takes.
      const fresh = new FreshStore(async () => {
        const store = await openSyncedStore({ cwd: opened.cwd, agent, ...(g.offline ? { offline: true } : {}) });
        // Claims, renewals and results go out at once: someone is waiting on them.
        store.syncOptions = { ...store.syncOptions, push: true };
        // What the open found (a policy on the integration branch that does not parse, say): said
        // when the worker starts and again whenever a change reopens the Store.
        for (const n of store.notices.splice(0)) process.stderr.write(`git-handoff: ${neutralise(n)}\n`);
        return store;
      }, 10 * 60_000);
      try {
        await work(fresh);
      } finally {
        fresh.close();
      }
    });
    async function work(fresh: FreshStore): Promise<void> {
      if (client && o.fullAccess) process.stderr.write(`git-handoff: warning: ${fullAccessWarning(client)}\n`);
      if (client === "claude" && o.fullAccess && process.getuid?.() === 0 && !process.env.IS_SANDBOX) {
        process.stderr.write("git-handoff: warning: Claude Code refuses --dangerously-skip-permissions as root unless IS_SANDBOX=1 is set (say so only inside a sandbox)\n");
      }
      const stop = catchInterrupts(() => process.stderr.write("git-handoff: stopping: releasing the tasks in progress (Ctrl-C again to quit at once)\n"));
      try {
        const s = await runWorker(fresh, {
          command,
          ...(client ? { agent: { client, fullAccess: !!o.fullAccess, warn: (line: string) => process.stderr.write(`git-handoff: warning: ${neutralise(line)}\n`) } } : {}),
          once: !!o.once,
          concurrency,
          pollMs,
          keep: !!o.keep,
          pushBranch: !!o.pushBranch,
          addressedOnly: !!o.addressedOnly,
          ...(o.ttl !== undefined ? { ttl: o.ttl } : {}),
          signal: stop.signal,
          // Lines quote task text from other machines: neutralised for the terminal.
          log: (line) => process.stderr.write(`git-handoff: ${neutralise(line)}\n`),
          stderr: (chunk) => process.stderr.write(chunk),
        });
        process.stderr.write(`git-handoff: worker stopped: ${s.done} done, ${s.review ? `${s.review} in review, ` : ""}${s.failed} failed, ${s.cancelled} cancelled, ${s.released} released\n`);
        if (stop.interrupted) process.exitCode = EXIT_CODES.interrupted;
        else if (s.heldForApproval) {
          const ids = s.heldForApproval;
          const one = ids.length === 1;
          fail("unapproved_command", `worker --once took nothing: the only ready task${one ? "" : "s"} it could take (${ids.join(", ")}) ${one ? "has a verify command" : "have verify commands"} nobody approved in this clone`, { tasks: ids }, [
            { action: "fix_input", detail: `a person (not an agent) reads ${one ? "it" : "each"} and approves: ${ids.map((id) => handoffCommand("approve", id)).join("; ")}` },
          ]);
        }
      } finally {
        stop.close();
      }
    }
  });
}

