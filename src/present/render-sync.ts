// A sync report as text, shared by the CLI's `sync` and the MCP sync tool.
import { operationName, subjectOf } from "../core/event.ts";
import type { SyncReport } from "../sync/sync.ts";
import { splitProblem } from "../sync/namespace-split.ts";
import { adviceFor } from "../sync/repair-hazard.ts";

export function syncText(r: SyncReport): string {
  if (r.coalesced) return `synced with ${r.remote}: another sync of this clone, begun after this one was asked for, just did it`;
  const lines = [
    `synced with ${r.remote}: ${r.fetched.length} updated here, ${r.pushed.length} pushed, ${r.replayed.length} replayed, ${r.removed.length} archived elsewhere`,
  ];
  for (const t of r.confirmed) lines.push(`confirmed: ${t.event ? operationName(t.event.type) : "write"} of ${t.event ? subjectOf(t.event) : t.ref} by ${t.event?.agent ?? "?"}`);
  for (const t of r.refused) lines.push(`refused:   ${t.event ? operationName(t.event.type) : "write"} of ${t.event ? subjectOf(t.event) : t.ref} by ${t.event?.agent ?? "?"}`);
  for (const c of r.conflicts) lines.push(`conflict for ${c.agent}: ${c.message}`);
  lines.push(...notPushedLines(r.remote, r.not_pushed));
  if (r.archived.length) lines.push(`archived ${r.archived.length} finished task(s) into refs/handoff/archive`);
  if (r.split) {
    const { detail, fix } = splitProblem(r.remote, r.split);
    lines.push(`warning: ${detail}; ${fix}`);
  }
  return lines.join("\n");
}

/** A ref this clone could not push because a ref planted on the remote stands where git would create it. */
export function notPushedLines(remote: string, refs: SyncReport["not_pushed"]): string[] {
  return refs.map((b) => `not pushed: ${b.ref} (${remote} holds ${b.blocker}, a name no git-handoff writes, and git cannot create ${b.ref} beside it; ${(b.repair ?? adviceFor(null, true)).hint}, then sync again)`);
}
