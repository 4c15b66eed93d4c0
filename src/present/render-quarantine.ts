// How refs refused on receive read in `sync` and `status` text.
import type { Quarantined } from "../sync/quarantine.ts";
import type { RepairAdvice } from "../sync/repair-hazard.ts";

/**
 * The command that overwrites a refused ref: `--repair`, or, when `--repair` would refuse it (this
 * clone has no value of its own, or the remote's value holds a fence, a finished task, a live claim
 * or lease this clone's lacks), `--repair --force` once a person has checked the remote's value.
 */
export function repairHint(advice: RepairAdvice | undefined): string {
  // No hazard and nothing of this clone's to put there: a name no git-handoff writes, deleted.
  if (!advice?.hazard) return `git handoff sync --repair ${advice?.deletes ? "deletes" : "overwrites"} it`;
  return `git handoff sync --repair refuses it: ${advice.hazard}; after checking the remote's value, git handoff sync --repair --force ${advice.deletes ? "deletes" : "overwrites"} it`;
}

/**
 * One line per refused ref; a newer-format ref only when first seen, then it is known. `said`:
 * refs whose line a `--repair` run printed already (not repaired, and why): no hint again.
 */
export function quarantineLines(remote: string, quarantined: (Quarantined & { new: boolean })[], advice: Map<string, RepairAdvice>, said: ReadonlySet<string> = new Set()): string[] {
  const lines: string[] = [];
  for (const q of quarantined) {
    if (q.kind === "newer") {
      if (q.new) lines.push(`from a newer git-handoff: ${q.ref} (${q.reason}); kept under refs/handoff-remotes/${remote}/, not used here`);
      continue;
    }
    const where = q.unsent ? "nothing of it fetched" : `kept under refs/handoff-remotes/${remote}/`;
    const hint = said.has(q.ref) ? "not repaired: see above" : repairHint(advice.get(q.ref));
    lines.push(`refused on receive: ${q.ref}: ${q.reason} (${where}; ${hint})`);
  }
  return lines;
}
