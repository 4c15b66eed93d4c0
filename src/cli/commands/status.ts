import type { Command } from "commander";
import { buildStatus } from "../../core/overview.ts";
import { listAgents } from "../../store/agent-store.ts";
import { predictConflicts } from "../../store/conflicts.ts";
import { openMergeCache } from "../../store/merge-cache-file.ts";
import { listTasks } from "../../store/task-store.ts";
import { viewListing } from "../../store/task-listing.ts";
import { buildRoster } from "../../core/agent-roster.ts";
import { asViewTasks } from "../../core/view-tasks.ts";
import { withGlobals, withStore } from "../context.ts";
import { packAfterView } from "../view-packing.ts";
import { emit, warn } from "../../present/output.ts";
import { ALL_HINT, leaseSectionText, MATRIX_ROWS } from "../../present/render-status.ts";
import { markStatus, notedStatusText } from "../../present/newer-note.ts";
import { SECTION_LINES } from "../../present/bounded-text.ts";
import { leaseRows } from "../../core/lease-overview.ts";
import { loadLeases } from "../../store/lease-store.ts";
import { storeViewer } from "../../store/check-context.ts";
import { listTentative, readConflicts, type Conflict } from "../../sync/local-area.ts";
import { readQuarantine } from "../../sync/quarantine.ts";
import { newerIn } from "../../sync/newer-refs.ts";
import type { NewerRef } from "../../store/store.ts";
import { quarantineLines } from "../../present/render-quarantine.ts";
import { withRepairAdvice } from "../../sync/repair-hazard.ts";
import { computeDrift } from "../../store/drift.ts";
import { indexedLogEvents } from "../../store/log-index.ts";
import { driftSectionText } from "../../present/render-drift.ts";

function syncText(conflicts: Conflict[], tentative: number): string {
  const lines: string[] = [];
  if (conflicts.length) {
    lines.push("", "sync conflicts (git handoff sync-conflicts --ack once read)");
    for (const c of conflicts) lines.push(`  ${c.message}`);
  }
  if (tentative) lines.push("", `${tentative} tentative offline operation(s): confirmed or refused at the next git handoff sync`);
  return lines.join("\n");
}

export function registerStatus(program: Command): void {
  withGlobals(
    program
      .command("status")
      .description("bird's-eye view: agents, task x agent claims, worktrees, blocked edges, review queue, inboxes, leases, predicted merge conflicts, sync conflicts")
      .option("--no-conflicts", "skip the merge preview (it runs git merge-tree per branch pair not seen before)")
      .option("--all", "every line of every section (the text view shows the first lines of long sections and counts the rest)"),
  ).action(async (o: { conflicts: boolean; all?: boolean }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      store.keepRecords();
      const leaseSet = (await loadLeases(store)).set.leases;
      // The text view reads the open tasks and counts the history (viewListing), unless a file
      // lease names a task it left out; --json reads every task. The bounded text reads the view
      // file's columns and the records it shows (view-columns.ts), --all every record.
      const open = g.json ? null : await viewListing(store, { whole: !!o.all });
      // The set of its ids only when a lease names a task (7,500 of them at 10,000 tasks).
      const leased = leaseSet.filter((l) => l.task !== null);
      const named = open && leased.length ? new Set(open.tasks.ids) : null;
      const part = open && !leased.some((l) => !named!.has(l.task!)) ? open : null;
      const [listed, { agents, problems: agentProblems }] = await Promise.all([part ?? listTasks(store, { settled: false }), listAgents(store)]);
      const { problems } = listed;
      // Whole records (--json) are read into columns once, for every section below.
      const tasks = asViewTasks(listed.tasks);
      for (const p of [...problems, ...agentProblems]) warn(p);
      const now = store.now();
      const records = agents.map((a) => a.record);
      // Pairs of branch tips merged by an earlier status come from the cache file, not git merge-tree.
      const merges = o.conflicts ? openMergeCache(store) : null;
      // Other agents' claims and leases inside the takeover grace are held, as a write would find them.
      const viewer = await storeViewer(store);
      const roster = buildRoster(records, tasks, now, store.config, viewer);
      // The local branches, listed once where refs are files: the merge preview's tips and drift's.
      const heads = store.usesRefFiles ? await store.listRefs("refs/heads/") : undefined;
      const predicted = merges ? await predictConflicts(store, { roster, cache: merges.cache, heads }) : null;
      merges?.save();
      // The bounded text view shows the first matrix rows: only those are built (--json: all of them).
      const view = buildStatus({ tasks, agents: records, conflicts: predicted, config: store.config, now, roster, viewer, ...(part ? { counted: part.counted } : {}), ...(g.json || o.all ? {} : { rowLimit: MATRIX_ROWS, shown: SECTION_LINES }) });
      // Sync conflicts waiting for this agent, and offline grants not yet confirmed.
      const syncConflicts = await readConflicts(store, store.actor.agent);
      const tentative = (await listTentative(store)).map((t) => ({ ref: t.ref, commit: t.commit, event: t.event }));
      // `conflicts` stays the list of sync conflicts; the merge preview is `predicted_conflicts`.
      // Other agents' leases inside the takeover grace are listed, as a write of their paths is refused.
      const leases = leaseRows(leaseSet, tasks, records, now, store.config, viewer);
      // Edits outside each agent's declaration, and claims renewed while their branch stands still
      // (the bounded text shows the first stuck claims: only their rows are made, the rest counted).
      const drift = await computeDrift(store, { agents: records, tasks, leases: leaseSet, logged: await indexedLogEvents(store), heads, ...(g.json || o.all ? {} : { stuckShown: SECTION_LINES }) });
      // Every record the text shows is read: the view file's records are closed.
      open?.close?.();
      const driftText = driftSectionText(drift, o.all ? {} : { limit: SECTION_LINES, hint: ALL_HINT });
      const policy = store.policySource;
      // Remote refs refused on receive: kept out of refs/handoff/ until repaired. Read once: the
      // ones from a newer git-handoff are what store.heldAsNewer() would read again.
      const remote = await store.syncRemote();
      const keptBack = remote ? [...(await readQuarantine(store, remote)).entries.values()] : [];
      // Each with the command that repairs it (repair-hazard.ts), in --json as in the text.
      const quarantined = remote ? await withRepairAdvice(store, keptBack) : [];
      // Tasks the remote holds from a newer git-handoff: marked on every line and record that names them, as task list marks them.
      const held = remote ? newerIn(keptBack, remote) : new Map<string, NewerRef>();
      const overview = { ...markStatus(view, held), predicted_conflicts: view.conflicts, conflicts: syncConflicts, tentative, leases, drift, policy, quarantined, me: store.actor, problems: [...problems, ...agentProblems] };
      const me = store.actor;
      const policyLine = `policy: ${store.config.mode}${policy?.commit ? `, from ${policy.branch} (${policy.commit.slice(0, 12)})` : policy?.branch ? `, nothing committed on ${policy.branch}: this worktree's file` : ", no integration branch: this worktree's file"}`;
      const refused = remote && !g.json ? quarantineLines(remote, quarantined.map((q) => ({ ...q, new: true }))) : [];
      emit(!!g.json, overview, () => `${notedStatusText(view, `${me.agent} (${me.scope}${me.branch ? `, ${me.branch}` : ""})`, now, held, { all: !!o.all })}\n${leaseSectionText(leases, { all: !!o.all })}${driftText ? `\n${driftText}` : ""}\n${policyLine}${syncText(syncConflicts, tentative.length)}${refused.length ? `\n\n${refused.join("\n")}` : ""}`);
      await packAfterView(store);
    });
  });
}
