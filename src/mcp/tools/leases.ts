// Tools over file leases: each calls the same function in store/lease-actions.ts as the CLI verb
// (lease, check, unlease). Paths are read against the repository root, not the server's cwd.
import * as z from "zod/mini";
import { fail } from "../../core/errors.ts";
import { checkText, leaseLine } from "../../present/lease-render.ts";
import { validateAgentId } from "../../core/ids.ts";
import { check, lease, listLeases, unlease } from "../../store/lease-actions.ts";
import type { Store } from "../../store/store.ts";
import { defineTool } from "../tool.ts";
import { describe, tally, ttl } from "./common.ts";

const WRITE = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;
const opt = <T>(key: string, v: T | undefined) => (v === undefined ? {} : { [key]: v });
const LeaseRow = z.record(z.string(), z.unknown());

/** The store functions read relative paths against `cwd`: for tools that is the worktree root. */
const rootOf = (store: Store) => ({ cwd: store.repo.workTree ?? store.cwd });

const paths = (what: string) =>
  describe(
    z.array(z.string()).check(z.minLength(1), z.maxLength(100)),
    `${what}: files, folders (trailing /) or globs like src/api/**, relative to the repository root`,
  );

export const leaseFilesTool = defineTool({
  name: "lease_files",
  title: "Lease files",
  description: [
    "Announce that you are about to edit files: a lease on paths or globs, shared by default (others get warned), `exclusive` to keep everyone else out (their check_files answers deny). Leases end at expires_at; a lease_files call of yours renews all your leases once they are a third through their time.",
    "Call it before editing files another agent might touch, ideally with the `task` it serves (one you hold: claim it first). Not needed for files only you work on; paths ignored by the repository's lease policy are reported in `ignored` and not leased.",
    "Refusals: `held_by_other`: another agent's lease is in the way: data.holder holds data.pattern until data.expires_at (data.exclusive tells which kind). Do not edit those files: work elsewhere, wait, or ask the holder to release them. With `task`: `not_holder` (you do not hold it: claim it first, or lease without `task`), `held_by_other` (another agent holds it), `final_state` (finished) or `wrong_state` (in review). `invalid_input`: a path outside the repository, a bad ttl or too many paths.",
  ].join("\n"),
  input: {
    paths: paths("what to lease"),
    exclusive: z.optional(describe(z.boolean(), "nobody else may lease or edit anything overlapping (default false: shared)")),
    task: z.optional(describe(z.string(), "the task this lease serves, one you hold: the lease lasts as long as your claim (refused for a task you do not hold; one not here yet is allowed)")),
    ttl: ttl(),
    reason: z.optional(describe(z.string(), "why, shown to agents that run into the lease (at most 500 characters)")),
  },
  output: {
    leased: z.array(LeaseRow),
    ignored: z.array(z.string()),
    // Returned whenever they apply: a client checking results against this schema refused them before.
    task_not_found: z.optional(describe(z.string(), "`task` names no task here (a typo, or not synced yet): the lease stands on its own TTL")),
    not_extended: z.optional(z.object({ tasks: z.array(z.string()), note: z.string() })),
  },
  annotations: { ...WRITE, idempotentHint: true },
  async run(a, { session }) {
    const store = await session.store();
    const r = await lease(store, a.paths, {
      ...rootOf(store),
      ...opt("exclusive", a.exclusive),
      ...opt("task", a.task),
      ...opt("ttl", a.ttl),
      ...opt("reason", a.reason),
    });
    const now = store.now();
    const lines = [
      ...r.leased.map((l) => `leased ${leaseLine(l, now)}`),
      ...r.ignored.map((p) => `not leased (ignored by policy): ${p}`),
      ...(r.task_not_found ? [`note: no task ${r.task_not_found} here (a typo, or not synced yet): the lease stands on its own TTL`] : []),
      ...(r.not_extended ? [`note: ${r.not_extended.note}`] : []),
    ];
    const kind = a.exclusive ? "exclusive" : "shared";
    return {
      data: { ...r },
      text: lines.join("\n") || "nothing leased",
      summary: `leased ${r.leased.length} path${r.leased.length === 1 ? "" : "s"} (${kind})${r.leased[0] ? ` until ${r.leased[0].expires_at}` : ""}${r.ignored.length ? `; ${r.ignored.length} ignored by policy` : ""}`,
      next: [{ tool: "release_files", arguments: { paths: r.leased.map((l) => l.pattern) }, why: "when your edits are committed" }].filter(() => r.leased.length > 0),
    };
  },
});

export const checkFilesTool = defineTool({
  name: "check_files",
  title: "Check files before editing",
  description: [
    "May you edit these paths? One answer per path: deny (inside another agent's exclusive lease), warn (another agent leases this very file), info (another agent leases a folder or glob containing it) or ok; each names the holder, its task and expiry. Through a sync remote another agent's lease counts as held for the takeover grace past its expiry (clock skew; the message says until when), as a lease of the path would be refused. Reads one ref, writes nothing. While the sync remote's lease set is from a newer git-handoff (kept back here), `newer_on_remote` is true and a path this clone's possibly stale copy calls free is answered warn (deny in strict mode).",
    "Call it before editing a file others may be working on. An ok or warn/info answer comes back as a normal result: for warn, coordinate with the holder before large edits.",
    "Refusal `held_by_other`: at least one path is denied; error.data carries the full answer (verdict, paths with holders and suggestions). Do not edit the denied paths: work elsewhere, wait until the lease ends, or ask the holder.",
  ].join("\n"),
  input: { paths: paths("what you intend to edit") },
  output: { agent: z.string(), mode: z.string(), verdict: z.string(), paths: z.array(LeaseRow), newer_on_remote: z.optional(z.literal(true)) },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(a, { session }) {
    const store = await session.store();
    const r = await check(store, a.paths, rootOf(store));
    if (r.verdict === "deny") {
      const denied = r.paths.filter((p) => p.verdict === "deny");
      // Like the CLI's exit 3: the agent reads the holder from the same error body as any refusal.
      fail("held_by_other", denied.map((p) => p.message).join("; "), { ...r }, denied[0]?.suggestions ?? []);
    }
    const flagged = r.paths.filter((p) => p.verdict !== "ok");
    return {
      data: { ...r },
      text: checkText(r),
      summary: `${r.verdict}: ${tally(r.paths.map((p) => p.verdict))}${flagged.length ? `; ${flagged[0]!.message}` : ""}`.slice(0, 300),
    };
  },
});

export const releaseFilesTool = defineTool({
  name: "release_files",
  title: "Release file leases",
  description: [
    "Release your leases on paths or globs, named as you leased them, or all of them with `all`. Returns what was released, and in `not_released` each path you did not hold (and who does).",
    "Call it when you are done editing the files (after committing), so others are no longer warned or denied. Leases of other agents are never touched; for a task you hand over, release its files too.",
    "Refusal `invalid_input`: neither paths nor all given, or a path outside the repository.",
  ].join("\n"),
  input: {
    paths: z.optional(describe(z.array(z.string()).check(z.maxLength(100)), "the paths or globs to release, relative to the repository root")),
    all: z.optional(describe(z.boolean(), "release every lease you hold")),
  },
  output: {
    released: z.array(z.string()),
    not_released: z.array(z.object({ path: z.string(), code: z.enum(["not_holder", "not_found"]), holders: z.array(z.string()) })),
  },
  annotations: { ...WRITE, idempotentHint: true },
  async run(a, { session }) {
    const store = await session.store();
    if (!a.all && !a.paths?.length) fail("invalid_input", "name the paths to release, or pass all: true");
    const r = await unlease(store, a.paths ?? [], { ...rootOf(store), ...opt("all", a.all) });
    return { data: r, text: r.released.length ? r.released.map((p) => `unleased ${p}`).join("\n") : "nothing to release" };
  },
});

export const listLeasesTool = defineTool({
  name: "list_leases",
  title: "List file leases",
  description: [
    "The live file leases of every agent (or of one, with `agent`): path or glob, holder, task, shared or exclusive, expiry and reason. Expired leases are not listed, except another agent's that stands for the takeover grace (with a sync remote, clock skew): it carries `grace_until`, and a lease of its path is refused until then.",
    "Call it to see who works where before you start, or to find your own leases to release. For a yes/no on specific files before editing, check_files is the one to call. While the sync remote's lease set is from a newer git-handoff (kept back here), the list may be stale: each lease carries `newer_on_remote: true` and `notices` says so.",
    "Refusal `invalid_input`: a malformed agent name.",
  ].join("\n"),
  input: { agent: z.optional(describe(z.string(), "only this agent's leases")) },
  output: { leases: z.array(LeaseRow), total: z.number() },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(a, { session }) {
    const store = await session.store();
    const { leases, stale } = await listLeases(store, a.agent !== undefined ? { agent: validateAgentId(a.agent) } : {});
    const now = store.now();
    const exclusive = leases.filter((l) => l.exclusive).length;
    return {
      // While the lease set is held back as newer each lease carries newer_on_remote, and the notice says why.
      data: { leases, total: leases.length },
      ...(stale ? { notices: [stale] } : {}),
      text: leases.length ? leases.map((l) => leaseLine(l, now)).join("\n") : "no live leases",
      summary: leases.length ? `${leases.length} live lease${leases.length === 1 ? "" : "s"} (${exclusive} exclusive) held by ${[...new Set(leases.map((l) => l.agent))].join(", ")}` : "no live leases",
    };
  },
});

export const LEASE_TOOLS = [leaseFilesTool, checkFilesTool, releaseFilesTool, listLeasesTool];
