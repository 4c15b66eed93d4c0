// How refs refused on receive read in `sync` and `status` text.
import type { Quarantined } from "../sync/quarantine.ts";
import { placeOf } from "../store/ref-families.ts";

/** One line per refused ref; a newer-format ref only when first seen, then it is known. */
export function quarantineLines(remote: string, quarantined: (Quarantined & { new: boolean })[]): string[] {
  const lines: string[] = [];
  for (const q of quarantined) {
    if (q.kind === "newer") {
      if (q.new) lines.push(`from a newer git-handoff: ${q.ref} (${q.reason}); kept under refs/handoff-remotes/${remote}/, not used here`);
      continue;
    }
    const where = q.unsent ? "nothing of it fetched" : `kept under refs/handoff-remotes/${remote}/`;
    // A name no git-handoff writes has no value here to put in its place: the repair deletes it.
    const repair = placeOf(q.ref).kind === "bad" ? "deletes" : "overwrites";
    lines.push(`refused on receive: ${q.ref}: ${q.reason} (${where}; git handoff sync --repair ${repair} it)`);
  }
  return lines;
}
