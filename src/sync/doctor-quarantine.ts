// doctor's view of refs refused on receive: a failed check while any remote ref is quarantined.
import type { Store } from "../store/store.ts";
import type { Check } from "./doctor-check.ts";
import { readQuarantine } from "./quarantine.ts";
import { repairAdvice } from "./repair-hazard.ts";

export async function quarantineCheck(store: Store, remote: string): Promise<Check> {
  const entries = [...(await readQuarantine(store, remote)).entries.values()];
  const invalid = entries.filter((q) => q.kind === "invalid");
  const newer = entries.filter((q) => q.kind === "newer");
  if (invalid.length) {
    // --repair refuses some (this clone has none of its own, or the remote's holds a fence, a
    // finished task, a live claim or lease): the fix names --force for those, after checking.
    const advice = await repairAdvice(store, invalid);
    const forced = invalid.filter((q) => advice.get(q.ref)?.hazard).map((q) => q.ref);
    const deleted = forced.filter((ref) => advice.get(ref)!.deletes).length;
    const verb = deleted === forced.length ? "deletes" : deleted ? "overwrites or deletes" : "overwrites";
    const plain = "check who can push to the remote, then overwrite them with this clone's state: git handoff sync --repair";
    return {
      name: "received",
      status: "fail",
      detail: `${invalid.length} ref(s) from ${remote} failed validation and stay under refs/handoff-remotes/${remote}/: ${invalid.map((q) => `${q.ref} (${q.reason})`).join("; ")}`,
      fix: forced.length
        ? `${forced.length === invalid.length ? "check who can push to the remote and what its values hold" : `${plain}; it refuses ${forced.join(", ")} (it says why)`}: once a person has checked the remote's values are not wanted, git handoff sync --repair --force ${verb} ${forced.length === invalid.length ? "them" : "those"}`
        : plain,
    };
  }
  if (newer.length) return { name: "received", status: "warn", detail: `${newer.length} ref(s) from a newer git-handoff are kept unread: ${newer.map((q) => q.ref).join(", ")}`, fix: "upgrade git-handoff" };
  return { name: "received", status: "ok", detail: `every ref received from ${remote} passed validation` };
}
