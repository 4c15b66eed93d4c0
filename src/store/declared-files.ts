// An agent's declared session files, for the pre-edit hook: read from its agent ref through a
// small cache keyed by that ref's tip (`.git/handoff/declared/<agent>`), so the common edit reads
// a ref and a file, not a commit, a tree and a record. A heartbeat moves the tip (at most once a
// heartbeat interval), which is a miss and one record read.
//
// The fields are the agent record's as one build's schema decoded them, taken without its check:
// the second line names the format (a test pins it to the agent schema's fingerprint,
// test/cache-formats.test.ts), so a file another schema wrote is a miss, and is replaced. (Builds
// before it wrote the JSON on the second line: this build finds no format there, an older one finds
// no JSON, so each reads the record and writes the file its own way.)
import type { AgentRecord } from "../core/agent.ts";
import { agentRef, loadAgent } from "./agent-store.ts";
import { readSmallFile, writeSmallFile } from "./small-file.ts";
import type { Store } from "./store.ts";

/** The format of the file's fields: bumped with any change of the agent record's schema. */
export const DECLARED_FORMAT = 1;
const HEAD = `declared ${DECLARED_FORMAT}\n`;

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
  if (cached?.startsWith(tip + "\n") && cached.startsWith(HEAD, tip.length + 1)) {
    try {
      const d = JSON.parse(cached.slice(tip.length + 1 + HEAD.length)) as DeclaredFiles;
      if (Array.isArray(d.files) && d.files.every((f) => typeof f === "string")) return { declared: d, record: load };
    } catch {
      /* a torn or foreign file is a miss */
    }
  }
  const r = await load();
  const declared: DeclaredFiles = { files: r && !r.ended_at ? r.files : [], started_at: r?.started_at ?? null };
  writeSmallFile(path, `${tip}\n${HEAD}${JSON.stringify(declared)}`);
  return { declared, record: async () => r };
}
