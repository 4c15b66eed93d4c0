// What a pre-edit hook adds to the agent's context besides the lease check: a one-line notice the
// first time it touches a file outside its declaration (never a block), and release requests (or
// answers to its own) it has not been told yet. Cheap in the common case: the declaration is first
// tried from the agent's record and its own leases (a task's scope is leased when it is claimed);
// tasks and the log index are read only for a path that falls outside that. A path a heartbeat
// already recorded (drift.ts) still gets its notice: the agent itself was never told.
import { declarationOf, declaredWithin, isDeclared, undeclaredNotice, unjudgedNotice } from "../core/declaration.ts";
import type { HandoffEvent } from "../core/event.ts";
import { isLeaseLive } from "../core/lease.ts";
import { LOCAL_MATCH_BUDGET, newMatchBudget, SPENT } from "../core/match-budget.ts";
import { requestsContext } from "../present/render-requests.ts";
import { declaredFiles } from "../store/declared-files.ts";
import { HEARTBEAT_NOTE } from "../store/drift.ts";
import { recordCatches } from "../store/catch-log.ts";
import { loadLeasesFor } from "../store/lease-store.ts";
import { indexedLogEvents } from "../store/log-index.ts";
import { deliver } from "../store/release-requests.ts";
import type { Store } from "../store/store.ts";
import { listTasks } from "../store/task-store.ts";
import type { EditCheck } from "./edit-check.ts";
import { mark } from "./profile.ts";

export interface ContextAdditions {
  text: string;
  /** Written after the answer is out (the undeclared_edit events). */
  events: HandoffEvent[];
}

async function driftNotice(store: Store, result: EditCheck): Promise<ContextAdditions> {
  const paths = result.answers.filter((a) => !a.ignored).map((a) => a.path);
  if (!paths.length) return { text: "", events: [] };
  const agent = store.actor.agent;
  const now = store.now();
  const { declared, record: loadRecord } = await declaredFiles(store, agent);
  // The check's own read covers these paths (a subset of what it checked) unless it wrote since.
  const set = result.leases ? { leases: result.leases } : (await loadLeasesFor(store, { paths, agent })).set;
  const quick = [...declared.files, ...set.leases.filter((l) => l.agent === agent && !l.auto && isLeaseLive(l, now)).map((l) => l.pattern)];
  // One budget of matching for the whole notice (match-budget.ts): a path not judged within it
  // gets a line saying so, never a notice of drift, and nothing is recorded for it.
  const work = newMatchBudget(LOCAL_MATCH_BUDGET);
  const outside = paths.filter((p) => declaredWithin(quick, p, work) !== true);
  if (!outside.length) return { text: "", events: [] };
  const [record, { tasks }] = await Promise.all([loadRecord(), listTasks(store, { settled: false })]);
  const d = declarationOf(agent, record, tasks, set.leases, now);
  if (!d) return { text: "", events: [] };
  const judged = outside.map((p) => [p, isDeclared(d, p, work)] as const);
  const unjudged = judged.filter(([, v]) => v === SPENT).map(([p]) => p);
  const unsure = unjudged.length ? unjudgedNotice(unjudged) : "";
  const undeclared = judged.filter(([, v]) => v === false).map(([p]) => p);
  if (!undeclared.length) return { text: unsure, events: [] };
  const since = record?.started_at ?? "";
  const told = new Set((await indexedLogEvents(store)).filter((e) => e.type === "undeclared_edit" && e.agent === agent && e.at >= since && e.note !== HEARTBEAT_NOTE).flatMap((e) => e.paths ?? []));
  const fresh = undeclared.filter((p) => !told.has(p));
  if (!fresh.length) return { text: unsure, events: [] };
  const { scope, worktree, branch } = store.actor;
  const event: HandoffEvent = { type: "undeclared_edit", task: "", agent, at: now.toISOString(), scope, worktree, branch, paths: fresh };
  return { text: [undeclaredNotice(d, fresh), unsure].filter(Boolean).join("\n"), events: [event] };
}

/** The notice and the deliveries for this edit; a failure here never changes the hook's answer. */
export async function contextAdditions(store: Store, result: EditCheck): Promise<ContextAdditions> {
  const lines: string[] = [];
  let events: HandoffEvent[] = [];
  try {
    const n = await driftNotice(store, result);
    if (n.text) lines.push(n.text);
    events = n.events;
  } catch {
    /* drift is advice: never a reason to fail the hook */
  }
  mark("drift checked");
  try {
    const fresh = await deliver(store, "hook");
    const text = requestsContext(store.actor.agent, fresh);
    if (text) lines.push(text);
  } catch {
    /* a request not delivered now is delivered on the next edit */
  }
  mark("requests delivered");
  return { text: lines.join("\n"), events };
}

export async function recordAdditions(store: Store, a: ContextAdditions): Promise<void> {
  await recordCatches(store, a.events);
}
