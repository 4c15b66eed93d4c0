// `ask` and `answer`: a release request on the requester's log ref, the answer on the holder's, and
// when the answer is release, the task or leases given back in the SAME transaction as the answer.
// Deliveries (a request shown in a hook's or SessionStart's context) are logged by the one told,
// so each reaches each context once.
import { classifyAgent } from "../core/agent.ts";
import { HandoffError } from "../core/errors.ts";
import type { HandoffEvent } from "../core/event.ts";
import { validateAgentId } from "../core/ids.ts";
import { chainLeaseOps, releaseLeases } from "../core/lease-ops.ts";
import { askRelease, answerRequest, foldRequests, newRequestId, REQUEST_ID_RE, stillHeld, undelivered, type NotCompared, type ReleaseRequest, type Verdict } from "../core/release-request.ts";
import { releaseTask } from "../core/task-ops.ts";
import { followTask } from "../core/task-leases.ts";
import type { RefUpdate } from "../git/refs.ts";
import { loadAgent } from "./agent-store.ts";
import { logRef } from "./catch-log.ts";
import { writeSteps } from "./codec.ts";
import { freshBytes } from "./entropy.ts";
import { leaseUpdate, loadLeases } from "./lease-store.ts";
import { indexedLogEvents } from "./log-index.ts";
import type { Store } from "./store.ts";
import { listTasks, loadTask, TASK_FILE, taskRef } from "./task-store.ts";
import { leasesFirst } from "./task-lease-store.ts";

const LOG_FILE = "event.json";

function logUpdate(store: Store, tip: string | null, events: HandoffEvent[]): RefUpdate {
  const ref = logRef(store.actor.agent);
  return { ref, new: writeSteps(store, tip, LOG_FILE, events.map((event) => ({ event, record: event }))), old: tip };
}

/** Every request known here, with its answer, and what each agent has been told. */
export async function readRequests(store: Store): Promise<ReturnType<typeof foldRequests>> {
  return foldRequests(await indexedLogEvents(store));
}

export async function findRequest(store: Store, id: string): Promise<ReleaseRequest | undefined> {
  return (await readRequests(store)).requests.find((r) => r.id === id);
}

/** `ask <agent> --release <task|path>`: the request, recorded on the caller's log. */
export async function askToRelease(store: Store, to: string, target: string, reason: string | null): Promise<ReleaseRequest & { not_compared?: NotCompared }> {
  if (to.startsWith("-")) throw new HandoffError({ code: "invalid_input", message: `expected an agent name, got ${JSON.stringify(to)}` });
  validateAgentId(to);
  const id = newRequestId(freshBytes(8));
  const asked = await store.casLoop(async (now) => {
    const [holder, { tasks }, { set }, ctx] = await Promise.all([loadAgent(store, to), listTasks(store), loadLeases(store), store.writeContext(now)]);
    const status = holder ? classifyAgent(holder.record, now, store.config) : null;
    // Judged with the takeover grace (listTasks settles by it too): a task or lease whose claim or
    // lease of it would be refused is held, so it can be asked for.
    const decided = askRelease({ to, target, reason }, { status, tasks, leases: set.leases }, id, ctx);
    if (!decided.ok) throw new HandoffError(decided.refusal);
    const tip = await store.readRef(logRef(store.actor.agent));
    return { updates: [logUpdate(store, tip, [decided.event])], result: decided };
  });
  const { event, not_compared } = asked;
  return { id, from: event.agent, to, at: event.at, task: event.task || null, paths: event.paths ?? [], reason: event.reason ?? null, answer: null, ...(not_compared ? { not_compared } : {}) };
}

export interface AnswerResult {
  request: ReleaseRequest;
  /** What was given back in the answer's transaction (nothing for keep, or when it was no longer held). */
  released: { task: string | null; paths: string[] };
}

/** `answer <request> --release|--keep`: the answer on the caller's log; a release in the same transaction. */
export async function answerReleaseRequest(store: Store, id: string, verdict: Verdict, until: string | null, reason: string | null): Promise<AnswerResult> {
  if (!REQUEST_ID_RE.test(id)) throw new HandoffError({ code: "invalid_input", message: `not a request id: ${JSON.stringify(id.slice(0, 80))} (they look like rq-0a1b2c3d)`, suggestions: [{ action: "fix_input", detail: "see the requests waiting for you: git handoff inbox" }] });
  return store.casLoop(async (now) => {
    const ctx = { actor: store.actor, now };
    const request = await findRequest(store, id);
    const decided = answerRequest(request, { id, verdict, until, reason }, ctx);
    if (!decided.ok) throw new HandoffError(decided.refusal);
    const r = request!;
    const updates: RefUpdate[] = [];
    const released = { task: null as string | null, paths: [] as string[] };
    if (verdict === "release") {
      const leases = await loadLeases(store);
      if (r.task) {
        const { task, tip } = await loadTask(store, r.task).catch(() => ({ task: null, tip: null }));
        // Still ours to give: released with its scope leases; else there is nothing left to release.
        if (task && tip && task.status === "claimed" && task.claim?.agent === ctx.actor.agent) {
          const out = releaseTask(task, ctx);
          if (!out.ok) throw new HandoffError(out.refusal);
          updates.push({ ref: taskRef(task.id), new: writeSteps(store, tip, TASK_FILE, out.steps), old: tip });
          const lu = leaseUpdate(store, leases.tip, chainLeaseOps(leases.set, await store.writeContext(now), [(s, c) => followTask(s, out.record, c)]));
          if (lu) updates.push(lu);
          released.task = task.id;
        }
      } else {
        const mineLeases = leases.set.leases.filter((l) => l.agent === ctx.actor.agent && r.paths.includes(l.pattern));
        // A path leased as a task's scope goes with its task (claim and scope leases): a claimed
        // task without its lease would be held but unguarded, and its next renewal would lease
        // the path again.
        const ops: Parameters<typeof chainLeaseOps>[2] = [];
        const viaTask = new Set<string>();
        for (const id of new Set(mineLeases.flatMap((l) => (l.task ? [l.task] : [])))) {
          const { task, tip } = await loadTask(store, id).catch(() => ({ task: null, tip: null }));
          if (!task || !tip || task.status !== "claimed" || task.claim?.agent !== ctx.actor.agent) continue;
          const out = releaseTask(task, ctx);
          if (!out.ok) throw new HandoffError(out.refusal);
          updates.push({ ref: taskRef(task.id), new: writeSteps(store, tip, TASK_FILE, out.steps), old: tip });
          ops.push((set, c) => followTask(set, out.record, c));
          viaTask.add(id);
          released.task ??= id;
        }
        const plain = [...new Set(mineLeases.filter((l) => !l.task || !viaTask.has(l.task)).map((l) => l.pattern))];
        if (plain.length) ops.push((set, c) => releaseLeases(set, { patterns: plain }, c));
        if (ops.length) {
          const lu = leaseUpdate(store, leases.tip, chainLeaseOps(leases.set, await store.writeContext(now), ops));
          if (lu) updates.push(lu);
        }
        released.paths = [...new Set(mineLeases.map((l) => l.pattern))];
      }
    }
    const tip = await store.readRef(logRef(ctx.actor.agent));
    updates.push(logUpdate(store, tip, [decided.event]));
    // A released task's leases go first should the transaction stop half way (refOrder).
    const answer = { verdict, at: decided.event.at, until, reason };
    return { updates: leasesFirst(updates), result: { request: { ...r, answer }, released } };
  });
}

export type Channel = "hook" | "session";

/**
 * What the caller has not yet been told in this channel (requests to it, answers to its requests),
 * marked as told in the same call. Best effort: a failed mark only means telling it again.
 */
export async function deliver(store: Store, channel: Channel): Promise<{ requests: ReleaseRequest[]; answers: ReleaseRequest[] }> {
  const agent = store.actor.agent;
  const { requests, delivered } = await readRequests(store);
  const all = undelivered(agent, requests, delivered.get(agent), channel);
  const todo = { requests: all.requests.length ? await held(store, all.requests) : [], answers: all.answers };
  const marks = [...todo.requests.map((r) => ({ r, kind: "request" })), ...todo.answers.map((r) => ({ r, kind: "answer" }))];
  if (!marks.length) return todo;
  const { scope, worktree, branch } = store.actor;
  const at = store.now().toISOString();
  const events: HandoffEvent[] = marks.map(({ r, kind }) => ({ type: "request_delivered", task: r.task ?? "", agent, at, scope, worktree, branch, request: r.id, note: `${kind}/${channel}` }));
  try {
    await store.casLoop(async () => ({ updates: [logUpdate(store, await store.readRef(logRef(agent)), events)], result: null }));
  } catch (e) {
    if (!(e instanceof HandoffError)) throw e;
  }
  return todo;
}

/** The requests whose target their holder still holds (the others are moot). */
async function held(store: Store, requests: ReleaseRequest[]): Promise<ReleaseRequest[]> {
  const [{ tasks }, { set }] = await Promise.all([listTasks(store, { settled: false }), loadLeases(store)]);
  const now = store.now();
  return requests.filter((r) => stillHeld(r, tasks, set.leases, now));
}

/**
 * The inbox's share: requests waiting for the caller's answer (while it still holds what they ask
 * for), and answers to the caller's requests (for a day).
 */
export async function requestInbox(store: Store, agent = store.actor.agent): Promise<{ asked: ReleaseRequest[]; answered: ReleaseRequest[] }> {
  const { requests } = await readRequests(store);
  const dayAgo = store.now().getTime() - 86_400_000;
  const open = requests.filter((r) => r.to === agent && !r.answer);
  return {
    asked: open.length ? await held(store, open) : [],
    answered: requests.filter((r) => r.from === agent && r.answer && Date.parse(r.answer.at) >= dayAgo),
  };
}

