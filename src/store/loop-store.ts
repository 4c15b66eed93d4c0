// The session loop's record at refs/handoff/loop: read, and changed by compare-and-swap. Each change
// is one commit whose event says what changed, so `git log refs/handoff/loop` is the loop's story.
import { dirname, join } from "node:path";
import { appendNoFollow, ownFolder, readTextNoFollow, replaceFile } from "../git/safe-file.ts";
import type { HandoffEvent } from "../core/event.ts";
import { LoopRecord, type LoopUnit } from "../core/loop-record.ts";
import { writeSteps } from "./codec.ts";
import { REF_ROOT, type Store } from "./store.ts";

export const LOOP_REF = `${REF_ROOT}loop`;
export const LOOP_FILE = "loop.json";

export async function loadLoop(store: Store): Promise<{ record: LoopRecord; tip: string } | null> {
  const tip = await store.readRef(LOOP_REF);
  if (!tip) return null;
  return { record: await store.record(LOOP_REF, tip, LOOP_FILE, LoopRecord), tip };
}

/**
 * Applies `change` to the current record (null: none yet) and writes the result, re-reading on a
 * lost race so the change always applies to the latest state. `change` returns null to write
 * nothing, or the new record and a one-line note of what changed.
 */
export function changeLoop(store: Store, change: (current: LoopRecord | null, now: Date) => { record: LoopRecord; note: string } | null): Promise<LoopRecord | null> {
  return store.casLoop(async (now) => {
    const cur = await loadLoop(store);
    // Records from the store are shared (cached by commit): the change works on its own copy.
    const out = change(cur ? structuredClone(cur.record) : null, now);
    if (!out) return { updates: [], result: cur?.record ?? null };
    const record = { ...out.record, updated_at: now.toISOString() };
    const { agent, scope, worktree, branch } = store.actor;
    const event: HandoffEvent = { type: "loop", task: "", agent, at: now.toISOString(), scope, worktree, branch, note: `${record.id}: ${out.note}` };
    const commit = writeSteps(store, cur?.tip ?? null, LOOP_FILE, [{ event, record }]);
    return { updates: [{ ref: LOOP_REF, new: commit, old: cur?.tip ?? null }], result: record };
  });
}

/**
 * Which loops were started in this clone: a local file beside the git dir's other local state, so
 * sync never brings one. A loop record that came through the sync remote is shown, never acted on
 * here (no agent signalled, no folder removed, no resume), whatever host and pid it names.
 */
const startedFile = (store: Store) => join(store.repo.commonDir, "handoff", "loops-started");

/**
 * What this clone's loop decided when it started, kept beside `loops-started`: its integration
 * branch and, per unit, its id, agent and tasks. The synced record may report progress, never
 * change these: a loop acts only as the agents it started, on the tasks it planned for them.
 */
interface LocalPlan {
  integration: string;
  units: { id: string; agent: string; tasks: string[] }[];
}

const planFile = (store: Store, id: string) => join(store.repo.commonDir, "handoff", "loop-plans", `${id}.json`);

function planOf(rec: Pick<LoopRecord, "integration"> & { units: Pick<LoopUnit, "id" | "agent" | "tasks">[] }): LocalPlan {
  return { integration: rec.integration, units: rec.units.map((u) => ({ id: u.id, agent: u.agent, tasks: [...u.tasks] })) };
}

export function markLoopStartedHere(store: Store, id: string, plan?: Pick<LoopRecord, "integration" | "units">): void {
  ownFolder(dirname(startedFile(store)));
  if (plan) {
    ownFolder(dirname(planFile(store, id)));
    replaceFile(planFile(store, id), JSON.stringify(planOf(plan)) + "\n");
  }
  appendNoFollow(startedFile(store), `${id}\n`, true);
}

/**
 * Why this clone must not act on `rec` (resume it, stop its agents, release or claim for its
 * units), or null when it is the loop started here, as it was planned here. Only local state
 * decides: a record that came through the sync remote may name this host and a loop id used here.
 */
export function ownLoopProblem(store: Store, rec: LoopRecord): string | null {
  if (!loopStartedHere(store, rec.id)) return `loop ${rec.id} was not started in this clone (its record came through the sync remote)`;
  let plan: LocalPlan;
  try {
    plan = JSON.parse(readTextNoFollow(planFile(store, rec.id)) ?? "null") as LocalPlan;
  } catch {
    plan = null as unknown as LocalPlan;
  }
  if (!plan || !Array.isArray(plan.units)) return `loop ${rec.id} has no plan recorded in this clone (.git/handoff/loop-plans/)`;
  if (plan.integration !== rec.integration) return `loop ${rec.id}'s record names integration branch ${JSON.stringify(rec.integration)}; it was started here for ${JSON.stringify(plan.integration)}`;
  // The record's schema holds each unit's agent to unitAgent(loop, unit): the same units as planned are the loop's own.
  if (JSON.stringify(planOf(rec).units) !== JSON.stringify(plan.units)) return `loop ${rec.id}'s record names other units, agents or tasks than this clone planned for it`;
  return null;
}

export function loopStartedHere(store: Store, id: string): boolean {
  try {
    return (readTextNoFollow(startedFile(store)) ?? "").split("\n").includes(id);
  } catch {
    return false;
  }
}
