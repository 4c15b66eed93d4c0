// `doctor`'s checks of the coordination state itself: leases that outlived their task or holder,
// dependencies on tasks that do not exist, dependency cycles, and records written in a format
// version this git-handoff does not know. Each problem comes with the command that fixes it;
// `--repair` removes the task leases the lease check reports as outlived (one judgement for both:
// core/outlived-leases.ts).
import { classifyAgent } from "../core/agent.ts";
import { findCycle } from "../core/dependency-graph.ts";
import { isLeaseLive } from "../core/lease.ts";
import { outlivedLeases, type OutlivedLease } from "../core/outlived-leases.ts";
import type { Task } from "../core/task.ts";
import { listAgents } from "../store/agent-store.ts";
import { archivedTips } from "../store/archive.ts";
import { formatMarkerOid, parseCommit, parseTree, readTyped } from "../store/codec.ts";
import { treeMarkerOid } from "../store/lease-tree.ts";
import { LEASE_TREE_FORMAT_V2 } from "../store/lease-tree-format.ts";
import { LEASES_REF, loadLeases } from "../store/lease-store.ts";
import { sweepOrphanTaskLeases } from "../store/lease-sweep.ts";
import { viewContext } from "../store/check-context.ts";
import { REF_ROOT, type Store } from "../store/store.ts";
import { listTasks, TASKS_PREFIX } from "../store/task-store.ts";
import { taskMarkerV2Oid } from "../store/task-format.ts";
import type { Check } from "./doctor-check.ts";
import { newerFormatGuard, type NewerFormatGuard } from "./doctor-newer.ts";
import { handoffCommand } from "../core/shell-quote.ts";

export async function stateChecks(store: Store, repair = false, newer: NewerFormatGuard = newerFormatGuard()): Promise<Check[]> {
  return [
    ...(await newer.run("leases", async () => [repair ? await leaseRepair(store) : await leaseCheck(store)])),
    ...(await newer.run("dependencies", async () => [await dependencyCheck(store)])),
    ...(await newer.run("format", async () => [await formatCheck(store)])),
  ];
}

/** `--repair`: task leases their holder's task no longer justifies go (lease-sweep.ts), then the check. */
async function leaseRepair(store: Store): Promise<Check> {
  const removed = await sweepOrphanTaskLeases(store);
  const check = await leaseCheck(store);
  if (!removed.length) return check;
  const list = removed.slice(0, 5).map((l) => `${l.agent}'s lease on ${l.pattern} (task ${l.task})`).join("; ");
  return { ...check, detail: `removed ${removed.length} task lease(s) that outlived their work: ${list}${removed.length > 5 ? "; ..." : ""}. ${check.detail}` };
}

async function leaseCheck(store: Store): Promise<Check> {
  const now = store.now();
  // Leases judged as --repair's sweep judges them (core/outlived-leases.ts), by the context the
  // views and writes settle tasks by (store/check-context.ts viewContext): a lease's holder whose
  // claim stands for the takeover grace still holds its task, so its lease is not called orphaned
  // (its fix, a forced unlease, would take what a claim of the task could not), and one whose claim
  // ran out past it holds the task no more, so --repair removes what this reports.
  const [ctx, { set }, { tasks }, { agents }] = await Promise.all([viewContext(store, now), loadLeases(store), listTasks(store, { settled: false }), listAgents(store)]);
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const outlived = new Map(outlivedLeases(set.leases, (id) => byId.get(id), ctx).map((o) => [o.lease, o]));
  const gone = new Set(agents.filter((a) => classifyAgent(a.record, now, store.config) === "disconnected").map((a) => a.record.agent));
  const problems: { text: string; fix: string }[] = [];
  // Leases live by this clock only, no grace: this checks what outlived its work, and a lease past
  // its expiry here needs no fix (the next lease write sweeps it once its grace ends); the count
  // is of the stored leases still in force here, not a verdict a write could contradict.
  const live = set.leases.filter((x) => isLeaseLive(x, now));
  for (const l of live) {
    const o = outlived.get(l);
    const as = handoffCommand("unlease", l.pattern, "--agent", l.agent);
    if (o) problems.push({ text: `${l.agent}'s lease on ${l.pattern} serves task ${o.task.id}, ${outlivedWhy(o)}`, fix: as });
    // Not --repair's to fix: a silent holder may come back; gc removes it after gc_after.
    else if (gone.has(l.agent)) problems.push({ text: `${l.agent}, holder of ${l.pattern}, is disconnected`, fix: `git handoff gc (after gc_after), or ${as}` });
  }
  if (!problems.length) return { name: "leases", status: "ok", detail: `${live.length} live lease(s): each serves a task its holder works on, or none, and no holder is gone` };
  return { name: "leases", status: "fail", detail: `${problems.length} lease(s) outlived their work: ${problems.slice(0, 5).map((p) => p.text).join("; ")}`, fix: problems[0]!.fix };
}

/** Why a lease's task no longer justifies it, as doctor says it. */
function outlivedWhy({ lease, task, was, why }: OutlivedLease): string {
  if (why === "lapsed") return `whose claim by ${lease.agent} expired at ${was.claim!.expires_at}`;
  return why === "ended" ? `which is ${task.status}` : `which ${lease.agent} does not hold`;
}

async function dependencyCheck(store: Store): Promise<Check> {
  const { tasks } = await listTasks(store, { settled: false });
  const byId = new Map<string, Task>(tasks.map((t) => [t.id, t]));
  const archived = await archivedTips(store).catch(() => new Map<string, string>());
  const missing: string[] = [];
  const cycles: string[][] = [];
  for (const t of tasks) {
    for (const dep of t.after ?? []) {
      if (!byId.has(dep) && !archived.has(dep)) missing.push(`${t.id} waits on ${dep}`);
      else if (byId.has(dep) && !cycles.some((c) => c.includes(t.id))) {
        const cycle = findCycle(byId, t.id, dep);
        if (cycle) cycles.push(cycle);
      }
    }
  }
  const edges = tasks.reduce((n, t) => n + (t.after?.length ?? 0), 0);
  if (!missing.length && !cycles.length) return { name: "dependencies", status: "ok", detail: `${edges} dependency edge(s): every one names an existing task, no cycle` };
  const first = missing[0] ? missing[0].split(" waits on ") : cycles[0]!.slice(0, 2);
  return {
    name: "dependencies",
    status: "fail",
    detail: [missing.length ? `${missing.length} on a missing task: ${missing.slice(0, 5).join("; ")}` : "", cycles.length ? `${cycles.length} cycle(s): ${cycles.map((c) => c.join(" -> ")).join("; ")}` : ""].filter(Boolean).join("; "),
    fix: handoffCommand("undepend", first[0]!, "--on", first[1]!),
  };
}

async function formatCheck(store: Store): Promise<Check> {
  const ours = formatMarkerOid(store.oidBytes);
  const odd: string[] = [];
  const refs = await store.listRefs(REF_ROOT);
  for (const { name, oid } of refs) {
    try {
      const commit = parseCommit(await readTyped(store.reader, oid, "commit", name));
      const format = parseTree(await readTyped(store.reader, commit.tree, "tree", name), store.oidBytes, name).get("format");
      if (format === undefined || format === ours) continue;
      if (name === LEASES_REF && (format === treeMarkerOid(store.oidBytes) || format === treeMarkerOid(store.oidBytes, LEASE_TREE_FORMAT_V2))) continue;
      if (name.startsWith(TASKS_PREFIX) && format === taskMarkerV2Oid(store.oidBytes)) continue;
      odd.push(name);
    } catch {
      /* corrupt refs are the invariants check's business */
    }
  }
  if (!odd.length) return { name: "format", status: "ok", detail: `${refs.length} coordination ref(s), all in a format this build writes` };
  return { name: "format", status: "warn", detail: `${odd.length} ref(s) written in an unknown format version: ${odd.slice(0, 5).join(", ")}`, fix: "update git-handoff on this machine (another clone runs a newer version)" };
}
