// A sync that kept remote refs back (refused on receive, or from a newer git-handoff) is not a clean
// success: the CLI exits 3 beside its report, and MCP's sync tool answers this refusal, carrying
// the whole report in its data (as check_files carries its answer on a deny).
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
  return {
    code: "quarantined",
    message: `synced with ${r.remote} (${r.pushed.length} pushed, ${r.fetched.length} updated here), but ${r.quarantined.length} of its ref(s) are kept back, so this clone's copies of them may be stale: ${parts.join("; ")}`,
    data: { ...r },
    suggestions: [
      ...(invalid.length ? [{ action: "fix_input" as const, detail: "a person checks who can push to the remote (git handoff doctor names the refused steps), then overwrites them: git handoff sync --repair (a ref it refuses, one this clone has no value of or whose overwrite would lose a claim, lease or fence, takes --repair --force once checked)" }] : []),
      ...(newer.length ? [{ action: "fix_input" as const, detail: "upgrade git-handoff to read the newer refs" }] : []),
    ],
  };
}
