// An agent's declared session files, for the pre-edit hook: read from its agent ref through a
// small cache keyed by that ref's tip (`.git/handoff/declared/<agent>`), so the common edit reads
// a ref and a file, not a commit, a tree and a record. A heartbeat moves the tip (at most once a
// heartbeat interval), which is a miss and one record read.
import type { AgentRecord } from "../core/agent.ts";
import { agentRef, loadAgent } from "./agent-store.ts";
import { readSmallFile, writeSmallFile } from "./small-file.ts";
import type { Store } from "./store.ts";

export interface DeclaredFiles {
  /** The session's files; [] for an ended session. */
  files: string[];
  started_at: string | null;
}

export async function declaredFiles(store: Store, agent: string): Promise<{ declared: DeclaredFiles; record: () => Promise<AgentRecord | null> }> {
  const tip = await store.readRef(agentRef(agent));
  const load = async () => (await loadAgent(store, agent))?.record ?? null;
  if (!tip) return { declared: { files: [], started_at: null }, record: async () => null };
  const path = `${store.repo.commonDir}/handoff/declared/${agent}`;
  const cached = readSmallFile(path);
  if (cached?.startsWith(tip + "\n")) {
    try {
      const d = JSON.parse(cached.slice(tip.length + 1)) as DeclaredFiles;
      if (Array.isArray(d.files) && d.files.every((f) => typeof f === "string")) return { declared: d, record: load };
    } catch {
      /* a torn or foreign file is a miss */
    }
  }
  const r = await load();
  const declared: DeclaredFiles = { files: r && !r.ended_at ? r.files : [], started_at: r?.started_at ?? null };
  writeSmallFile(path, `${tip}\n${JSON.stringify(declared)}`);
  return { declared, record: async () => r };
}
