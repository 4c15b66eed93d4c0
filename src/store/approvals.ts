// Which stored commands a person in this clone has agreed to run. A task's `verify` command is
// shared state: anyone with push access to the sync remote can write one. It runs on `done` only
// if it was written in this clone (recorded here when it is written: a commit author proves
// nothing) or a person approved that exact command. The list lives in a local-only ref, outside
// refs/handoff/*, so sync never sends or receives it.
import { createHash } from "node:crypto";
import * as z from "zod/mini";
import { fail } from "../core/errors.ts";
import { isoTime, lazySchema } from "../core/schema-helpers.ts";
import { commitObject, encodeFiles, FORMAT_MARKER, readRecord } from "./codec.ts";
import type { Store } from "./store.ts";
import { handoffCommand } from "../core/shell-quote.ts";

export const APPROVALS_REF = "refs/handoff-local/approvals";
const FILE = "approvals.json";
/** Oldest entries give way beyond this: a clone approves a handful of commands, not thousands. */
const MAX_APPROVALS = 500;

export const Approval = lazySchema(() =>
  z.object({
    /** sha256 of the exact command text. */
    hash: z.string(),
    command: z.string(),
    /** "written": set in this clone; "approved": a person approved it after it arrived. */
    how: z.enum(["written", "approved"]),
    task: z.string(),
    by: z.string(),
    at: isoTime(),
  }),
);
export type Approval = z.infer<typeof Approval>;

const Approvals = lazySchema(() => z.array(Approval));

/** The hash a person gives as HANDOFF_APPROVE: sha256 of the command, as `printf %s CMD | sha256sum` prints it. */
export function commandHash(command: string): string {
  return createHash("sha256").update(command, "utf8").digest("hex");
}

async function readApprovals(store: Store): Promise<{ list: Approval[]; tip: string | null }> {
  const tip = await store.readRef(APPROVALS_REF);
  if (!tip) return { list: [], tip: null };
  return { list: (await readRecord(store.reader, store.oidBytes, tip, APPROVALS_REF, FILE, Approvals)).record, tip };
}

/** The approval of this exact command, or null. */
export async function approvalOf(store: Store, command: string): Promise<Approval | null> {
  const hash = commandHash(command);
  return (await readApprovals(store)).list.find((a) => a.hash === hash && a.command === command) ?? null;
}

/** Whether a command may run here, from one read of the list (a worker asks it of every candidate). */
export async function approvedHere(store: Store): Promise<(command: string) => boolean> {
  const commands = new Set((await readApprovals(store)).list.map((a) => a.command));
  return (command) => commands.has(command);
}

/** Records that `command` may run in this clone. Local only: never goes through the sync remote. */
export async function recordApproval(store: Store, command: string, how: Approval["how"], task: string): Promise<Approval> {
  const entry: Approval = { hash: commandHash(command), command, how, task, by: store.actor.agent, at: store.now().toISOString() };
  for (let n = 0; ; n++) {
    const { list, tip } = await readApprovals(store);
    const existing = list.find((a) => a.hash === entry.hash && a.command === command);
    if (existing) return existing;
    const next = [...list, entry].slice(-MAX_APPROVALS);
    const format = store.writer.write("blob", FORMAT_MARKER);
    const blob = store.writer.write("blob", JSON.stringify(next, null, 2) + "\n");
    const tree = store.writer.write("tree", encodeFiles(new Map([["format", format], [FILE, blob]])));
    const message = `${how} verify command of ${task}\n\n${JSON.stringify(entry, null, 2)}\n`;
    const commit = store.writer.write("commit", commitObject({ tree, parent: tip, author: store.actor.agent, at: store.now(), message }));
    // Straight to the local transaction: the store's loop would send a --push write to the remote.
    const r = await store.updateRefs([{ ref: APPROVALS_REF, new: commit, old: tip }]);
    if (r.ok) return entry;
    if (n >= 20) fail("lost_race", `could not record the approval (${r.message}); try again`);
    await new Promise((res) => setTimeout(res, 5 + Math.random() * 20));
  }
}

/**
 * How a person consents: on a terminal (the CLI asked and they said yes), or by naming the
 * command's hash in HANDOFF_APPROVE. Agents are never given either (the MCP server has no tool for it).
 */
export type Consent = { kind: "terminal" } | { kind: "hash"; hash: string | undefined };

/** Approves `command` for this clone if the consent covers exactly it; refuses otherwise. */
export async function approveCommand(store: Store, task: string, command: string, consent: Consent): Promise<Approval> {
  if (consent.kind === "hash" && consent.hash !== commandHash(command)) {
    fail(
      "unapproved_command",
      consent.hash
        ? `HANDOFF_APPROVE does not match the verify command of ${task}; nothing was approved`
        : `approving the verify command of ${task} needs a person: run ${handoffCommand("approve", task)} on a terminal, or set HANDOFF_APPROVE to the command's sha256`,
      { task, command },
    );
  }
  return recordApproval(store, command, "approved", task);
}
