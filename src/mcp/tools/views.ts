// Read-mostly tools: the agent's context at session start, the overview and the event history.
import { requestInbox } from "../../store/release-requests.ts";
import { renderAnswer, renderRequest } from "../../present/render-requests.ts";
import * as z from "zod/mini";
import { parseSince } from "../../core/duration.ts";
import { fail } from "../../core/errors.ts";
import { EventType, subjectOf } from "../../core/event.ts";
import { Actor } from "../../core/identity.ts";
import { validateAgentId, validateTaskId } from "../../core/ids.ts";
import { buildOverview } from "../../core/overview.ts";
import { viewerContext } from "../../core/clock-skew.ts";
import { isLive } from "../../core/task-ops.ts";
import { inboxFor } from "../../core/handoff.ts";
import { inboxContext } from "../../present/handoff-text.ts";
import { eventLines } from "../../present/render.ts";
import { nextCall, steps } from "../../present/suggestions.ts";
import { readEvents } from "../../store/events.ts";
import type { Store } from "../../store/store.ts";
import { listTasks } from "../../store/task-store.ts";
import { storeViewer } from "../../store/check-context.ts";
import { contextMemories } from "../../store/memory-store.ts";
import { heartbeatDriftNote } from "../../present/render-drift.ts";
import { memoriesContext, memoriesLabel } from "../../present/render-memories.ts";
import { declarationFields, registerAgentSession } from "../agent-registration.ts";
import { markNewer, markOverview, notedOverviewText, skippedNewerNote } from "../../present/newer-note.ts";
import { readyAmong } from "../../store/dependency-actions.ts";
import { takerOf } from "../../store/machine.ts";
import { HandoffEvent, Overview, OverviewShape, ShownTask, Task } from "../schemas.ts";
import { defineTool } from "../tool.ts";
import { describe, limit, tally, taskLines } from "./common.ts";

/** The overview, each claim on a task the sync remote holds from a newer git-handoff marked (`held`), as list_tasks marks it. */
async function overviewOf(store: Store) {
  const { tasks, problems } = await listTasks(store, { settled: false });
  const now = store.now();
  const held = await store.heldAsNewer();
  // Another agent's claim inside the takeover grace is held (grace_until), as `status` shows it.
  const viewer = await storeViewer(store);
  return { tasks, held, viewer, overview: { ...markOverview(buildOverview(tasks, now, undefined, {}, undefined, viewer), held), me: store.actor, problems } };
}

export const loadContext = defineTool({
  name: "load_context",
  title: "Load your coordination context",
  description: [
    "Call this once at the start of a session (and again after your context was reset or compacted). It tells you who you are to git-handoff (agent name, worktree, branch), the tasks you hold and when their leases end, the best tasks ready to claim, and who else holds what.",
    "Pass `agent` to choose your name when the server was not started with one (--agent or HANDOFF_AGENT in the MCP config win over it). Pass `objective` (with `files` you plan to change and what you `awaits`) to declare your session at the same time, as declare_session does; without them this call only records that you are alive.",
    "No need to call it before every action: every other tool reads the current state itself.",
  ].join("\n"),
  input: {
    agent: z.optional(describe(z.string(), "your agent name (letters, digits, . _ @ + -), used for every claim this session makes")),
    ...declarationFields("optional"),
  },
  output: {
    agent: Actor,
    agent_source: z.string(),
    session: z.object({ registered: z.boolean(), declared: z.boolean(), note: z.optional(z.string()), session_id: z.optional(z.string()), unjudged: z.optional(z.number()) }),
    claimed: z.array(ShownTask),
    ready: z.array(Task),
    ready_total: z.number(),
    overview: Overview,
    memories: z.optional(z.object({ notice: z.string(), shown: z.array(z.record(z.string(), z.unknown())), omitted: z.number() })),
  },
  annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: false },
  async run(a, { session }) {
    let note = "";
    if (a.agent !== undefined) {
      validateAgentId(a.agent);
      if (!(await session.adoptAgent(a.agent))) note = `the server was started as this agent (${session.agentSource}); ignoring agent ${JSON.stringify(a.agent)}`;
    }
    const store = await session.store();
    const { record: _record, ...registration } = await registerAgentSession(store, {
      ...(a.objective !== undefined ? { objective: a.objective } : {}),
      ...(a.files !== undefined ? { files: a.files } : {}),
      ...(a.awaits !== undefined ? { awaits: a.awaits } : {}),
      ...(a.session_id !== undefined ? { session_id: a.session_id } : {}),
    });
    const { tasks, held, viewer, overview } = await overviewOf(store);
    const now = store.now();
    const me = store.actor.agent;
    const claimed = tasks.filter((t) => isLive(t, now) && t.claim?.agent === me);
    // What ready_tasks lists: dependencies done, not addressed elsewhere, not passed over by claim_next
    // (another agent's claim inside the takeover grace is not ready, as for ready_tasks).
    const { ready, newer: passed } = readyAmong(tasks, await takerOf(store), viewerContext(now, viewer), held);
    const inbox = inboxContext(me, inboxFor(me, tasks, now)); // handoffs for this agent, fenced as untrusted
    // Release requests waiting for this agent's answer, and answers to its own: fenced like handoffs.
    const requests = await requestInbox(store);
    const negotiation = [...requests.asked.map((r) => renderRequest(r, "mcp")), ...requests.answered.map(renderAnswer)].join("\n");
    const memories = await contextMemories(store, claimed.map((t) => t.id));
    const remembered = memoriesContext(memories.shown, memories.omitted, me);
    const shown = ready.slice(0, 5);
    const text = [
      `you are ${me} (${store.actor.scope}${store.actor.branch ? `, branch ${store.actor.branch}` : ""}${store.actor.worktree ? `, ${store.actor.worktree}` : ""}); name from ${session.agentSource}`,
      ...(note ? [note] : []),
      ...(registration.unjudged ? [heartbeatDriftNote(registration.unjudged)] : []),
      "",
      "you hold:",
      taskLines(store, claimed, "nothing", held),
      "",
      `ready to claim (${ready.length}):`,
      taskLines(store, shown, "nothing; call watch to wait for work"),
      "",
      notedOverviewText(overview, held, now),
      "",
      ...(inbox ? [inbox, ""] : []),
      ...(negotiation ? [negotiation, ""] : []),
      ...(remembered ? [remembered, ""] : []),
      claimed.length ? "next: continue your claimed tasks (renew_task before leases end), complete_task when done" : "next: claim_next (or claim_task a ready one) before starting work",
    ].join("\n");
    return {
      data: {
        agent: store.actor,
        agent_source: session.agentSource,
        session: registration,
        claimed: markNewer(claimed, held),
        ready: shown,
        ready_total: ready.length,
        overview,
        // Other agents' words: marked, like handoff text, so a client never reads them as instructions.
        memories: { notice: memoriesLabel(memories.shown, me), shown: memories.shown.map((m) => ({ id: m.id, author: m.author, task: m.task, tags: m.tags, updated_at: m.updated_at, text: m.text })), omitted: memories.omitted },
      },
      text,
      summary: `you are ${me}; you hold ${claimed.length} task${claimed.length === 1 ? "" : "s"}${claimed.length ? ` (${claimed.map((t) => t.id).join(", ")})` : ""}; ${ready.length} ready to claim${inbox ? "; handoffs wait in your inbox" : ""}`,
      next: [
        ...requests.asked.slice(0, 1).map((r) => nextCall(steps.answer(r.id, "release"), `${r.from} asks you to release ${r.task ? `task ${r.task}` : r.paths.join(" ")} (or answer keep)`)),
        ...(inbox ? [nextCall(steps.inbox(), "handoffs for you")] : []),
        ...(claimed.length ? [nextCall(steps.done(claimed[0]!.id), "when its work is committed")] : ready.length ? [nextCall(steps.claimNext(), "take the best ready task")] : [{ tool: "watch", why: "wait until a task is ready" }]),
        ...(registration.declared ? [] : [nextCall(steps.declare(), "tell the others what you work on")]),
      ],
      ...(passed.length ? { notices: [skippedNewerNote(passed)] } : {}),
    };
  },
});

export const overviewTool = defineTool({
  name: "overview",
  title: "Overview",
  description: [
    "A bird's-eye view of coordination in this repository: how many tasks are in each status, who holds which task until when (with worktree and branch), leases ending within 5 minutes, and expired leases nobody took over yet. Another agent's claim that stands for the takeover grace past its expiry (with a sync remote, clock skew) is held, with `grace_until`: a claim of it is refused until then.",
    "Use it to orient yourself or before negotiating with another agent. For your own context at session start, call load_context.",
    "A claim with `newer_on_remote: true` is on a task the sync remote holds from a newer git-handoff (kept back here): this copy may be stale, and it cannot be changed here.",
  ].join("\n"),
  input: {},
  output: OverviewShape,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(_a, { session }) {
    const store = await session.store();
    const { held, overview } = await overviewOf(store);
    const counts = Object.entries(overview.counts).filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s}`).join(", ") || "no tasks";
    const holders = overview.holders.map((h) => `${h.agent} (${h.tasks.length})`).join(", ");
    return {
      data: overview,
      text: notedOverviewText(overview, held, store.now()) + overview.problems.map((p) => `\nwarning: ${p}`).join(""),
      summary: `${counts}${holders ? `; held by ${holders}` : ""}; ${overview.expiring_soon.length} expiring soon, ${overview.expired.length} expired`,
    };
  },
});

export const eventsTool = defineTool({
  name: "events",
  title: "Event history",
  description: [
    "The coordination history, oldest first: created, claimed, renewed, released, expired, done, failed, reclaimed, cancelled; each with agent, time, fence and details. Read from git history, so it is complete.",
    "Use it to find out what happened to a task or what an agent did. Filters combine; only the most recent `limit` events are returned (default 50).",
  ].join("\n"),
  input: {
    since: z.optional(describe(z.string(), "an ISO time (2026-11-29T10:00:00Z) or a duration back from now (2h, 7d)")),
    task: z.optional(describe(z.string(), "only this task")),
    agent: z.optional(describe(z.string(), "only events about or by this agent")),
    type: z.optional(describe(EventType, "only this event type")),
    limit: limit(50),
  },
  output: { events: z.array(HandoffEvent), problems: z.array(z.string()) },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(a, { session }) {
    const store = await session.store();
    if (a.type !== undefined && !EventType.options.includes(a.type)) fail("invalid_input", `unknown event type ${JSON.stringify(a.type)}`);
    // A damaged task ref is skipped and named, as `task list` and the CLI's `events` do: one bad ref never hides the rest.
    const problems: string[] = [];
    const events = await readEvents(store, {
      ...(a.since !== undefined ? { since: parseSince(a.since, store.now()) } : {}),
      ...(a.task !== undefined ? { task: validateTaskId(a.task) } : {}),
      ...(a.agent !== undefined ? { agent: validateAgentId(a.agent) } : {}),
      ...(a.type !== undefined ? { type: a.type } : {}),
      limit: a.limit ?? 50,
    }, a.task === undefined ? { onProblem: (m) => problems.push(m) } : {});
    const last = events[events.length - 1];
    return {
      data: { events, problems },
      text: (events.length ? eventLines(events).join("\n") : "no events") + problems.map((p) => `\nwarning: ${p}`).join(""),
      summary: last ? `${events.length} event${events.length === 1 ? "" : "s"} (${tally(events.map((e) => e.type))}); latest: ${last.type} of ${subjectOf(last)} by ${last.agent} at ${last.at}` : "no events",
    };
  },
});

export const VIEW_TOOLS = [loadContext, overviewTool, eventsTool];
