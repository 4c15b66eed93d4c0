import { resolve } from "node:path";
import type { Command } from "commander";
import { parseDuration } from "../../core/duration.ts";
import { EXIT_CODES, fail, HandoffError, type ErrorCode } from "../../core/errors.ts";
import { validateTaskId } from "../../core/ids.ts";
import { isFinal, type Task } from "../../core/task.ts";
import { settle } from "../../core/task-ops.ts";
import { viewContext } from "../../store/check-context.ts";
import { progressLines } from "../../present/handover-progress.ts";
import { neutralise, neutraliseLine } from "../../present/untrusted.ts";
import type { CasOptions, Store } from "../../store/store.ts";
import { cancel } from "../../store/task-actions.ts";
import { loadTask } from "../../store/task-store.ts";
import { createHandover, readInputs } from "../../work/handover.ts";
import { checkOutDir, outDirProblem } from "../../work/out-dir.ts";
import { saveResults } from "../../work/results.ts";
import { catchInterrupts } from "../../work/interrupts.ts";
import { waitForFinal, type WaitEnd } from "../../work/wait-final.ts";
import { collect, globals, parseInteger, startDir, withGlobals, withStore } from "../context.ts";
import { addressOption } from "./address-option.ts";

interface WaitOpts {
  objective?: string;
  id?: string;
  contextFile: string[];
  file: string[];
  to?: string;
  priority: string;
  timeout?: string;
  out?: string;
  until: string;
}

// Its lines carry names and text from records (a claim holder's name): neutralised here, once, for all.
const say = (line: string) => process.stderr.write(`git-handoff: ${neutralise(line)}\n`);

/**
 * How long the cancel after a --timeout or Ctrl-C may take, the read that settles a lost push
 * included: the caller asked to stop, and a remote that stopped answering must not hold it for
 * the per-call deadlines (20 s each by default). It says so when the cancel was not confirmed.
 */
const CANCEL_BOUND_MS = 5000;

/** Where `--until` ends the wait: a final state, or a submission for review as well. */
const UNTIL = ["final", "review"] as const;

export function registerWait(program: Command): void {
  withGlobals(
    program
      .command("wait")
      .description("hand a task to an agent (on any machine) and block until it is done: prints its output, saves its files to ./handoff-<id>/")
      .option("--objective <text>", "create a task with this objective, push it at once, and wait for it")
      .option("--id <id>", "wait for an existing task instead")
      .option("--context-file <path>", "a file the agent reads as context (repeatable; at most 1 MB each)", collect, [])
      .option("--file <path>", "an input file sent along (repeatable; at most 25 MB together)", collect, [])
      .option("--to <address>", "who may take it: KIND@MACHINE, KIND or @MACHINE (default: anyone)")
      .option("--priority <n>", "higher is taken first", "0")
      .option("--timeout <duration>", "stop waiting after this long and cancel the task this wait created (exit 8)")
      .option("--until <state>", "final: until done, failed or cancelled, through a review and its rejections; review: return once the work is submitted for review too (exit 0, status review)", "final")
      .option("--out <dir>", "where to save result files (default ./handoff-<id>)"),
    { writes: true, values: { "--id": "task", "--context-file": "file", "--file": "file", "--out": "dir", "--until": UNTIL } },
  ).action(async (o: WaitOpts, cmd: Command) => {
    if ((o.id === undefined) === (o.objective === undefined)) fail("usage", "give --objective TEXT to create a task, or --id ID to wait for one");
    if (o.id !== undefined && (o.contextFile.length || o.file.length || o.to !== undefined)) fail("usage", "--context-file, --file and --to describe a new task: use them with --objective, not --id");
    const g = globals(cmd);
    const base = startDir(cmd);
    // Everything is checked before anything is written.
    const to = o.to !== undefined ? addressOption(o.to) : null;
    const priority = parseInteger(o.priority, "--priority", -1000, 1000);
    const timeoutMs = o.timeout !== undefined ? parseDuration(o.timeout, "--timeout") : null;
    if (!(UNTIL as readonly string[]).includes(o.until)) fail("usage", `--until ${JSON.stringify(o.until.slice(0, 40))}: give final or review`);
    const until = o.until as (typeof UNTIL)[number];
    if (o.id !== undefined) validateTaskId(o.id);
    const inputs = o.objective !== undefined ? readInputs(base, o.contextFile, o.file) : null;
    await withStore(cmd, async (store) => {
      // Found only once the work was done, a bad folder cost the work and its output. The default
      // folder of a task created here has a fresh id: it is checked when the files are saved.
      if (o.out !== undefined) {
        const problem = outDirProblem(resolve(base, o.out), store.repo, true);
        if (problem) fail("invalid_input", `--out ${o.out}: ${problem} (name a folder for the result files; a missing one is made)`, { out: o.out });
      } else if (o.id !== undefined) checkOutDir(resolve(base, `handoff-${o.id}`), store.repo, false);
      // The creation, and a cancel on timeout or Ctrl-C, are pushed at once: someone waits on them.
      store.syncOptions = { ...store.syncOptions, push: true };
      // Installed before the task exists: a Ctrl-C during creation still cancels what was created.
      const stop = catchInterrupts(() => say("interrupted: stopping (Ctrl-C again to quit at once)"));
      try {
        const id = inputs ? (await createHandover(store, { objective: o.objective!, priority, to, inputs })).id : o.id!;
        if (inputs) say(`created ${id}${(await store.syncRemote()) ? " and pushed it" : ""}`);
        const end = await waitForFinal(store, id, {
          deadline: timeoutMs === null ? null : Date.now() + timeoutMs,
          signal: stop.signal,
          progress: (prev, next) => progressLines(prev, next).forEach(say),
          warn: say,
          justPushed: !!inputs,
          until,
        }).catch(async (e: unknown) => {
          // Its results ref (or the task's) was refused on receive: the handover cannot come back.
          // A task this wait created is cancelled rather than left for a worker to run for nothing.
          if (inputs && e instanceof HandoffError && e.code === "corrupt_state") {
            const t = await cancelOrFinal(store, id, `its results were refused on receive: ${e.message}`).catch(() => null);
            if (t?.status === "cancelled") say(`${id}: cancelled (its results cannot be received)`);
          }
          throw e;
        });
        const ended = end.kind === "final" || end.kind === "review";
        const { task, code, warnings } = ended ? { task: end.task, code: null, warnings: [] } : await giveUp(store, end, !!inputs, o.timeout);
        await report(store, task, code, resolve(base, o.out ?? `handoff-${id}`), o.out !== undefined, !!g.json, warnings);
      } finally {
        stop.close();
      }
    });
  });
}

/**
 * Waiting ended short of a final state (--timeout, Ctrl-C). A task this wait created is cancelled,
 * within CANCEL_BOUND_MS; one it only watched (--id) is someone else's business, and left as it is.
 */
async function giveUp(store: Store, end: WaitEnd, created: boolean, timeout: string | undefined): Promise<{ task: Task; code: ErrorCode | null; warnings: string[] }> {
  const id = end.task.id;
  const code: ErrorCode = end.kind === "timeout" ? "timed_out" : "interrupted";
  const why = end.kind === "timeout" ? "timed out" : "interrupted";
  const stays = (t: Task) => `it stays ${t.status}${t.claim ? ` with ${neutraliseLine(t.claim.agent)}` : ""}`;
  if (!created) {
    say(`${id}: ${why}; ${stays(end.task)} (this wait did not create it: it stopped waiting and cancelled nothing)`);
    return { task: end.task, code, warnings: [] };
  }
  const reason = end.kind === "timeout" ? `wait --timeout ${timeout} ran out` : "the waiter was interrupted";
  let task: Task;
  try {
    task = await cancelOrFinal(store, id, reason, { deadline: { until: Date.now() + CANCEL_BOUND_MS, firm: true } });
  } catch (e) {
    // The remote did not answer in time: what became of the cancel is not known here.
    if (!(e instanceof HandoffError) || !UNCONFIRMED.has(e.code)) throw e;
    const warning = `the cancel of ${id} could not be confirmed within ${CANCEL_BOUND_MS / 1000} s: ${e.message}`;
    say(`${id}: ${why}; ${neutralise(warning)}; it may still be ${end.task.status} on the remote (git handoff task show ${id} once it answers)`);
    return { task: end.task, code, warnings: [warning] };
  }
  if (task.status === "cancelled") say(`${id}: cancelled (${why})`);
  else if (isFinal(task.status)) return { task, code: null, warnings: [] }; // it ended just before: report how
  else say(`${id}: ${why}; ${stays(task)} (only its creator may cancel a task someone holds)`);
  return { task, code, warnings: [] };
}

/** Failures of a bounded cancel that leave its outcome open: the waiter reports them and ends as asked. */
const UNCONFIRMED = new Set<ErrorCode>(["remote_timeout", "remote_unreachable", "outcome_unknown", "lost_race"]);

/** Cancels the task (its creator may, even while a worker holds it); if it ended first, that end. */
async function cancelOrFinal(store: Store, id: string, reason: string, opts: CasOptions = {}): Promise<Task> {
  try {
    return await cancel(store, id, reason, opts);
  } catch (e) {
    if (!(e instanceof HandoffError) || (e.code !== "final_state" && e.code !== "held_by_other")) throw e;
    const { task } = await loadTask(store, id);
    return settle(task, await viewContext(store)).record;
  }
}

async function report(store: Store, task: Task, interrupted: ErrorCode | null, outDir: string, named: boolean, json: boolean, warnings: string[] = []): Promise<void> {
  // Waiting followed the results ref too (they land in one push): pull again only if it is missing.
  const r = await saveResults(store, task, outDir, { named });
  // In review (only with --until review): the work is done and verified, the decision someone else's.
  const code: ErrorCode | null = interrupted ?? (task.status === "done" || task.status === "review" ? null : task.status === "cancelled" ? "task_cancelled" : "task_failed");
  if (json) {
    // `code` is what the exit status says, by name: a timeout and an interrupt both leave the
    // task cancelled, and a reader of the body alone must tell them apart.
    const body = { id: task.id, status: task.status, code, ...r, warnings: [...warnings, ...r.warnings] };
    process.stdout.write(JSON.stringify(body, null, 2) + "\n");
  } else {
    for (const w of r.warnings) say(w);
    // A failed task's output too: what a command printed before it failed is often why.
    if (r.output && (task.status === "done" || task.status === "failed" || task.status === "review")) process.stdout.write(process.stdout.isTTY ? neutralise(r.output) : r.output);
    if (r.files.length) say(`saved ${r.files.length} file${r.files.length === 1 ? "" : "s"} to ${outDir}`);
    if (r.branch) {
      const remote = await store.syncRemote();
      // Checked on receive (handoff/<id>, an object id); neutralised all the same, as every received text is.
      say(neutralise(`code changes on branch ${r.branch} at ${r.commit}${remote ? `: git fetch ${remote} ${r.branch}` : ""}`));
    }
    for (const f of r.refused) say(`the worker refused to send ${neutralise(JSON.stringify(f.name))}: ${neutralise(f.reason)}`);
    if (task.status === "failed") say(`${task.id} failed: ${neutralise(r.failure_reason ?? "no reason given")}`);
  }
  if (code) process.exitCode = EXIT_CODES[code];
}
