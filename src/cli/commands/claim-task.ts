// `claim <id>` and `claim --next`: one verb, its command line as data and the function that runs
// it (verb-spec.ts), read by commander's program (claim.ts) and by the hot bundle's fast reading
// (fast-line.ts) alike; and what a claim prints, which `ready --claim` prints too (depend.ts).
import { fail } from "../../core/errors.ts";
import type { Store } from "../../store/store.ts";
import { claimNextReporting, claimReporting, type ClaimReport } from "../../store/task-actions.ts";
import { overlapText } from "../../core/claim-overlap.ts";
import { withStoreFor } from "../context.ts";
import { verb } from "../verb-command.ts";
import { emit } from "../../present/output.ts";
import { taskDetail } from "../../present/render.ts";
import { passedOverNote } from "../../present/newer-note.ts";
import { verifyText } from "../../present/render-tasks.ts";
import { approvalOf } from "../../store/approvals.ts";
import { deliveredWithClaim } from "./handoff.ts";

/** What a claim prints: the task, what came with it, and the work its scope meets (advisory). */
export async function emitClaim(store: Store, json: boolean, r: ClaimReport): Promise<void> {
  const t = r.task;
  const delivered = json ? "" : await deliveredWithClaim(store, t);
  const near = r.overlaps.length ? `\noverlaps (advisory, nothing is blocked):\n${r.overlaps.map((o) => `  ${overlapText(o)}`).join("\n")}` : "";
  // Whoever claims a task sees the command done will run, and who wrote it.
  const verify = t.verify ? `\n${verifyText(t, !!(await approvalOf(store, t.verify)))}` : "";
  const skipped = r.skipped_newer ? `\n${passedOverNote(r.skipped_newer)}` : "";
  emit(json, { ...t, overlaps: r.overlaps, ...(r.skipped_newer ? { skipped_newer: r.skipped_newer } : {}) }, () => `claimed ${t.id} (fence ${t.claim?.fence})${near}\n${taskDetail(t, store.now())}${verify}${delivered}${skipped}`);
}

/** `claim <id>` or `claim --next`. */
export const CLAIM = verb<[string | undefined], { next?: boolean; ttl?: string; force?: boolean; overCapacity?: boolean }>(
  {
    words: ["claim"],
    description: "claim a task for the calling agent (compare-and-swap; exit 3 if someone else holds it)",
    args: [["[id]", "the task to claim"]],
    options: [
      { flags: "--next", description: "claim the best ready task: highest priority, then oldest" },
      { flags: "--ttl <duration>", description: "lease length, like 90s, 10m, 2h (default 30m or claim_ttl in .handoff.yaml)" },
      { flags: "--force", description: "claim even though a task it waits on is not done" },
      { flags: "--over-capacity", description: "claim even though this agent already holds as many tasks as its capacity (max_concurrent, or session start --capacity)" },
    ],
    globals: { writes: true, values: { id: "task" } },
  },
  async ([id], o) => {
    if (id !== undefined && o.next) fail("usage", "give a task id or --next, not both");
    if (id === undefined && !o.next) fail("usage", "give a task id, or --next for the best ready task");
    const opts = { ...(o.ttl !== undefined ? { ttl: o.ttl } : {}), overCapacity: !!o.overCapacity };
    await withStoreFor(o, async (store, g) => {
      const r = id === undefined ? await claimNextReporting(store, opts) : await claimReporting(store, id, { ...opts, force: !!o.force });
      await emitClaim(store, !!g.json, r);
    });
  },
);
