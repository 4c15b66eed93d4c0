// A sync that kept remote refs back (refused on receive, or from a newer git-handoff) is not a clean
// success: the CLI exits 3 beside its report, and MCP's sync tool answers this refusal, carrying
// the whole report in its data (as check_files carries its answer on a deny). Refs of this clone's
// that a planted ref stood in the way of (`not_pushed`) are named too: everything else was pushed.
import type { Refusal } from "../core/errors.ts";
import type { SyncReport } from "./sync.ts";

export function heldBackRefusal(r: SyncReport): Refusal | null {
  if (!r.quarantined.length) return null;
  const invalid = r.quarantined.filter((q) => q.kind === "invalid");
  const newer = r.quarantined.filter((q) => q.kind === "newer");
  const parts = [
    ...(invalid.length ? [`refused on receive: ${invalid.map((q) => `${q.ref} (${q.reason})`).join("; ")}`] : []),
    ...(newer.length ? [`from a newer git-handoff: ${newer.map((q) => q.ref).join(", ")}`] : []),
  ];
  const blocked = r.not_pushed.length ? `; not pushed, a ref refused on receive stands where git would create it: ${r.not_pushed.map((b) => `${b.ref} (beside ${b.blocker})`).join(", ")}` : "";
  // What works for each (repair-hazard.ts): --repair, and --repair --force for those it refuses.
  const forced = invalid.filter((q) => q.repair?.hazard).map((q) => q.ref);
  return {
    code: "quarantined",
    message: `synced with ${r.remote} (${r.pushed.length} pushed, ${r.fetched.length} updated here), but ${r.quarantined.length} of its ref(s) are kept back, so this clone's copies of them may be stale: ${parts.join("; ")}${blocked}`,
    data: { ...r },
    suggestions: [
      ...(invalid.length
        ? [{ action: "fix_input" as const, detail: `a person checks who can push to the remote (git handoff doctor names the refused steps), then overwrites them: git handoff sync --repair${forced.length ? ` (it refuses ${forced.join(", ")}, each entry's repair says why: git handoff sync --repair --force once checked)` : ""}${r.not_pushed.length ? "; the refs not pushed go out with the sync it runs" : ""}` }]
        : []),
      ...(newer.length ? [{ action: "fix_input" as const, detail: "upgrade git-handoff to read the newer refs" }] : []),
    ],
  };
}
