// What coordination sees across agents: predicted merge conflicts, the stats report, and sync with
// other clones. The same store and sync functions as the CLI's conflicts, stats and sync.
import * as z from "zod/mini";
import { conflictSummaryLine, pairLine } from "../../core/conflict.ts";
import { parseSince } from "../../core/duration.ts";
import { computeStats } from "../../core/stats.ts";
import { statsText as renderStats } from "../../present/render-stats.ts";
import { syncText } from "../../present/render-sync.ts";
import { nextCall, steps } from "../../present/suggestions.ts";
import { recordConflicts } from "../../store/conflict-catches.ts";
import { predictConflicts } from "../../store/conflicts.ts";
import { readEvents } from "../../store/events.ts";
import { sync } from "../../sync/sync.ts";
import { heldBackRefusal } from "../../sync/held-back.ts";
import { HandoffError } from "../../core/errors.ts";
import { defineTool } from "../tool.ts";
import { describe } from "./common.ts";

const Row = z.record(z.string(), z.unknown());

export const conflictsTool = defineTool({
  name: "conflicts",
  title: "Predict merge conflicts",
  description: [
    "Predict merge conflicts between the branches of active agents, and of each against the integration branch, with git merge-tree (no worktree is touched). Each pair lists the conflicting paths.",
    "Call it before merging, or when an agent's work overlaps yours (check_files warned you): talk to the other agent before the conflict grows. Agents on the same branch or without one have nothing to compare.",
    "Writes nothing but a record of what it caught (for stats).",
  ].join("\n"),
  input: {},
  // No integration branch (none configured, no main or master): null, and only agents' branches are compared.
  output: { integration: z.nullable(z.string()), sides: z.array(Row), pairs: z.array(Row), conflicting: z.number() },
  annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: false },
  async run(_a, { session }) {
    const store = await session.store();
    const report = await predictConflicts(store);
    await recordConflicts(store, report);
    const summary = conflictSummaryLine(report);
    return {
      data: { ...report },
      text: [summary, ...report.pairs.map((p) => `  ${pairLine(p)}`)].join("\n"),
      summary,
      next: report.conflicting ? [nextCall(steps.agents(), "find the agents on the conflicting branches, to agree who changes what")] : [],
    };
  },
});

export const statsTool = defineTool({
  name: "stats",
  title: "Coordination stats",
  description: [
    "What coordination caught and cost, from the event history: duplicate claims refused, hook denials and warnings, predicted conflicts, handoffs delivered and acknowledged, time blocked, expired leases, verification and review results.",
    "Use it to report on a session or to judge whether the agents step on each other. `since` narrows the window (the whole history is still read for context).",
    "Refusal `invalid_input`: `since` is neither an ISO time nor a duration.",
  ].join("\n"),
  input: { since: z.optional(describe(z.string(), "only what happened since: an ISO time (2026-11-29T10:00:00Z) or a duration back from now (2h, 7d)")) },
  output: { since: z.nullable(z.string()), until: z.string(), events: z.number(), claims: Row, overlaps: Row, received: Row, hooks: Row, conflicts: Row, handoffs: Row, blocked: Row, leases: Row, review: Row, problems: z.array(z.string()) },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(a, { session }) {
    const store = await session.store();
    const now = store.now();
    const since = a.since !== undefined ? parseSince(a.since, now) : null;
    const problems: string[] = [];
    const stats = computeStats(await readEvents(store, {}, { onProblem: (p: string) => problems.push(p) }), { since, now });
    const text = renderStats(stats);
    return {
      data: { ...stats, problems },
      text: text + problems.map((p) => `\nwarning: ${p}`).join(""),
      summary: `${stats.events} events${stats.since ? ` since ${stats.since}` : ""}: ${stats.claims.refused_duplicate} duplicate claims refused, ${stats.hooks.deny} edits denied, ${stats.conflicts.predicted} conflicts predicted, ${stats.handoffs.delivered} handoffs`,
    };
  },
});

export const syncTool = defineTool({
  name: "sync",
  title: "Sync with other clones",
  description: [
    "Exchange coordination state (refs/handoff/*) with the sync remote: fetch, fast-forward or replay, push. Reports each operation another clone refused (e.g. a claim another clone won first) as a conflict for its agent.",
    "Claims and other exclusive writes already reach the remote by themselves; call sync to see other clones' tasks, handoffs and leases sooner, or after working offline.",
    "Refusals: `not_found`: this repository has no sync remote (a person sets one with the CLI: git handoff remote <name>); coordination then stays in this clone and nothing needs syncing. `remote_unreachable` (recoverable): try again later. `quarantined`: the sync went through, but refs the remote holds were kept back (refused on receive, or from a newer git-handoff); error.data is the whole report (its `quarantined` lists them, each refused one with `repair`, the command a person runs). A ref planted where one of this clone's must go (`refs/handoff/leases/x`) holds back only that one (`not_pushed`: ref, blocker, repair); everything else was pushed. Tasks and leases among them take no exclusive operation until a person repairs or upgrades: work on others.",
  ].join("\n"),
  input: {},
  output: {
    remote: z.string(),
    fetched: z.array(z.string()),
    pushed: z.array(z.string()),
    replayed: z.array(z.string()),
    removed: z.array(z.string()),
    conflicts: z.array(Row),
    confirmed: z.array(Row),
    refused: z.array(Row),
    rounds: z.number(),
    archived: z.array(z.string()),
    quarantined: z.array(Row),
    not_pushed: z.array(Row),
    coalesced: z.optional(z.boolean()),
    unchanged: z.optional(z.boolean()),
    // Returned whenever it applies: a client checking results against this schema refused every such sync before.
    split: z.optional(
      describe(
        z.object({ prefix: z.string(), namespace: z.string(), tasks: z.number(), leases: z.boolean() }),
        "the remote also holds coordination refs under `namespace` while this clone keeps its own under `prefix`: clones that disagree on --ref-prefix do not see each other's claims and leases (a person makes every clone use one: git handoff remote NAME --ref-prefix ...)",
      ),
    ),
  },
  annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: true },
  async run(_a, { session }) {
    const store = await session.store();
    const r = await sync(store);
    // Like the CLI's exit 3: the report is error.data, the refs kept back are its `quarantined`.
    const held = heldBackRefusal(r);
    if (held) throw new HandoffError(held);
    const mine = r.conflicts.filter((c) => c.agent === store.actor.agent);
    return {
      data: { ...r },
      text: syncText(r),
      next: mine.length ? [{ tool: "load_context", why: "some of your operations no longer apply: re-read what you hold" }] : [],
    };
  },
});

export const INSIGHT_TOOLS = [conflictsTool, statsTool, syncTool];
