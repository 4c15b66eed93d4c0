// How refs refused on receive read in `sync` and `status` text.
import type { Quarantined } from "../sync/quarantine.ts";
import { adviceFor, type RepairAdvice } from "../sync/repair-hazard.ts";

/**
 * One line per refused ref, with its repair advice (repair-hazard.ts: the same words `--json`
 * carries); a newer-format ref only when first seen, then it is known. `said`: refs whose line a
 * `--repair` run printed already (not repaired, and why): no hint again.
 */
export function quarantineLines(remote: string, quarantined: (Quarantined & { new: boolean; repair?: RepairAdvice })[], said: ReadonlySet<string> = new Set()): string[] {
  const lines: string[] = [];
  for (const q of quarantined) {
    if (q.kind === "newer") {
      if (q.new) lines.push(`from a newer git-handoff: ${q.ref} (${q.reason}); kept under refs/handoff-remotes/${remote}/, not used here`);
      continue;
    }
    const where = q.unsent ? "nothing of it fetched" : `kept under refs/handoff-remotes/${remote}/`;
    const hint = said.has(q.ref) ? "not repaired: see above" : (q.repair ?? adviceFor(null, false)).hint;
    lines.push(`refused on receive: ${q.ref}: ${q.reason} (${where}; ${hint})`);
  }
  return lines;
}
