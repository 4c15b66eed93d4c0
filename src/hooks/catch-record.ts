// A hook's non-ok answers, logged for `stats` (store/catch-log.ts). Only non-ok answers write, so
// the common case (ok) costs nothing; one event per verdict class per run. The agent waits for
// the hook process, not for its answer alone: so the events are handed to a detached process
// (`stdio: 'ignore'`) that writes them after the answer, and the hook exits at once.
// HANDOFF_HOOK_CATCH_WAIT=1 (a test switch) makes the hook wait for that process before exiting.
// When the fast path (git-hooks/fast-hook.sh) gave the answer, it runs the full hook in the
// background with HANDOFF_HOOK_AFTER_ANSWER=1, which writes the events itself.
import { rmSync } from "node:fs";
import type { PathAnswer } from "../core/check.ts";
import { createExclusive, ownFolder, readTextNoFollow } from "../git/safe-file.ts";
import type { HandoffEvent } from "../core/event.ts";
import { uniqueSuffix } from "../git/unique-name.ts";
import { catchEvent, recordCatches } from "../store/catch-log.ts";
import { indexedLogEvents } from "../store/log-index.ts";
import { spawnDetached } from "./spawn-detached.ts";
import type { Store } from "../store/store.ts";

export function hookCatchEvents(store: Store, hook: string, answers: PathAnswer[]): HandoffEvent[] {
  return (["deny", "warn", "info"] as const).flatMap((verdict) => {
    const hit = answers.filter((a) => a.verdict === verdict);
    if (!hit.length) return [];
    const top = hit[0]!.holders[0];
    return [
      catchEvent(store, "hook_caught", {
        hook,
        verdict,
        paths: hit.map((a) => a.path),
        task: top?.task ?? "",
        ...(top ? { holder: top.agent } : {}),
      }),
    ];
  });
}

/** Where events wait for the detached writer: one file per hook run, removed once written. */
export function pendingCatchDir(commonDir: string): string {
  return `${commonDir}/handoff/catch-pending`;
}

/**
 * Hands the hook's catch events to a detached process; resolves at once (or, with the test
 * switch, once it is done). Falls back to writing them here when it cannot start one.
 */
export async function recordHookCatch(store: Store, hook: string, answers: PathAnswer[]): Promise<void> {
  const events = hookCatchEvents(store, hook, answers);
  if (!events.length) return;
  // Run by the fast path in the background after it answered: nobody waits for this process.
  if (process.env.HANDOFF_HOOK_AFTER_ANSWER === "1") {
    await recordAndIndex(store, events);
    return;
  }
  const script = process.argv[1];
  const dir = pendingCatchDir(store.repo.commonDir);
  // A name no other hook run picks (created exclusively): not node:crypto, which a hook on the
  // agent's wait would load for four bytes (~5 ms of CPU, more on a loaded machine).
  const file = `${dir}/${uniqueSuffix()}.json`;
  try {
    if (!script || !/\.c?js$/.test(script)) throw new Error("not a built bundle");
    ownFolder(dir);
    createExclusive(file, JSON.stringify({ agent: store.actor.agent, events }));
    const wait = process.env.HANDOFF_HOOK_CATCH_WAIT === "1";
    await spawnDetached(process.execPath, [script, "hook", RECORD_CATCH, file], { cwd: store.cwd, env: { ...process.env, HANDOFF_AGENT: store.actor.agent }, wait });
  } catch {
    rmSync(file, { force: true });
    await recordCatches(store, events);
  }
}

/**
 * The events appended, then the log index brought up to the new tip: the next hook's delivery
 * check (drift-notice.ts) then finds it current instead of reading the new commits itself, which
 * costs it a git process on the agent's wait.
 */
async function recordAndIndex(store: Store, events: HandoffEvent[]): Promise<void> {
  if (!(await recordCatches(store, events))) return;
  try {
    await indexedLogEvents(store);
  } catch {
    /* the next reader indexes it */
  }
}

/** The detached writer's hook name (not one an agent calls). */
export const RECORD_CATCH = "_record-catch";

/** The detached writer: the events of one hook run, appended to the caller's log, then the file removed. */
export async function writePendingCatches(store: Store, file: string): Promise<void> {
  if (!file.startsWith(pendingCatchDir(store.repo.commonDir) + "/")) return;
  try {
    const { agent, events } = JSON.parse(readTextNoFollow(file) ?? "null") as { agent: string; events: HandoffEvent[] };
    if (agent === store.actor.agent) await recordAndIndex(store, events);
  } finally {
    rmSync(file, { force: true });
  }
}
