// doctor's view of refs refused on receive: a failed check while any remote ref is quarantined.
import type { Store } from "../store/store.ts";
import type { Check } from "./doctor-check.ts";
import { readQuarantine } from "./quarantine.ts";

export async function quarantineCheck(store: Store, remote: string): Promise<Check> {
  const entries = [...(await readQuarantine(store, remote)).entries.values()];
  const invalid = entries.filter((q) => q.kind === "invalid");
  const newer = entries.filter((q) => q.kind === "newer");
  if (invalid.length) {
    return {
      name: "received",
      status: "fail",
      detail: `${invalid.length} ref(s) from ${remote} failed validation and stay under refs/handoff-remotes/${remote}/: ${invalid.map((q) => `${q.ref} (${q.reason})`).join("; ")}`,
      fix: "check who can push to the remote, then overwrite them with this clone's state: git handoff sync --repair",
    };
  }
  if (newer.length) return { name: "received", status: "warn", detail: `${newer.length} ref(s) from a newer git-handoff are kept unread: ${newer.map((q) => q.ref).join(", ")}`, fix: "upgrade git-handoff" };
  return { name: "received", status: "ok", detail: `every ref received from ${remote} passed validation` };
}
