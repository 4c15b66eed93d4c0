// Validate on receive, the archive: anyone may append to refs/handoff/archive, but only as
// compaction writes it. Each commit adds entries and changes no other: every entry it names is one
// of its extra parents (so the commit exists, and came with the fetch), a task's final record
// (done, failed or cancelled) under that id, and the tree keeps every earlier entry as it was.
// Whether an archived tip descends from what a clone knew of the task is decided where the task
// would be dropped (integrate.ts), against that clone's own tip.
import { refComponentProblem } from "../core/ids.ts";
import { isFinal, type Task } from "../core/task.ts";
import { treeIds } from "../git/tree-object.ts";
import { parseBody } from "../store/archive.ts";
import type { ParsedCommit } from "../store/codec.ts";
import type { Store } from "../store/store.ts";

const OID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

export interface ArchiveStep {
  oid: string;
  commit: ParsedCommit;
}

/**
 * Why archive commit `e` is not a legal append to `parent` (null: its first commit), or null.
 * `readTask` reads a task record at a commit with the receive bounds, throwing when it cannot.
 */
export async function archiveStepProblem(store: Store, e: ArchiveStep, parent: ArchiveStep | null, readTask: (id: string, oid: string) => Promise<Task>): Promise<string | null> {
  const at = e.oid.slice(0, 12);
  if ((e.commit.parents[0] ?? null) !== (parent?.oid ?? null)) return `archive commit ${at} does not continue the archive's line`;
  const names = await treeOf(store, e.commit.tree);
  const before = parent ? await treeOf(store, parent.commit.tree) : new Map<string, string>();
  if (!names || !before) return `archive commit ${at} has no readable tree`;
  const body = parseBody(e.commit.message);
  const extra = e.commit.parents.slice(1);
  const entries = body ? Object.entries(body.archived ?? {}) : [];
  if (!body && extra.length) return `archive commit ${at} has parents it names no entry for`;
  if (body && (!entries.length || typeof body.archived !== "object" || Array.isArray(body.archived))) return `archive commit ${at} archives nothing`;
  const added = new Set<string>();
  for (const [id, tip] of entries) {
    const problem = refComponentProblem(id);
    if (problem) return `archive commit ${at} names a task id ${JSON.stringify(id.slice(0, 80))} that ${problem}`;
    if (typeof tip !== "string" || !OID.test(tip)) return `archive commit ${at} names ${JSON.stringify(String(tip).slice(0, 80))} as ${id}'s tip, not an object id`;
    if (!extra.includes(tip)) return `archive commit ${at} names ${tip.slice(0, 12)} as ${id}'s tip without carrying it as a parent`;
    if (!names.has(`${id}.json`)) return `archive commit ${at} archives ${id} without its record`;
    let task: Task;
    try {
      task = await readTask(id, tip);
    } catch (err) {
      return `archive commit ${at} names ${tip.slice(0, 12)} as ${id}'s tip, which is not a readable task: ${(err as Error).message}`;
    }
    if (task.id !== id) return `archive commit ${at} names ${tip.slice(0, 12)} as ${id}'s tip, which holds task ${JSON.stringify(task.id)}`;
    if (!isFinal(task.status)) return `archive commit ${at} archives ${id} at ${tip.slice(0, 12)}, where it is ${task.status}, not finished`;
    added.add(`${id}.json`);
  }
  if (extra.length !== new Set(entries.map(([, tip]) => tip)).size) return `archive commit ${at} has parents it names no entry for`;
  // Append-only: every earlier entry stays as it was, unless this commit archives that id again.
  for (const [name, oid] of before) {
    if (name === "format" || added.has(name)) continue;
    if (names.get(name) !== oid) return `archive commit ${at} ${names.has(name) ? "changes" : "drops"} the archived ${name}`;
  }
  for (const name of names.keys()) if (name !== "format" && !before.has(name) && !added.has(name)) return `archive commit ${at} adds ${name} without an entry for it`;
  return null;
}

async function treeOf(store: Store, oid: string): Promise<Map<string, string> | null> {
  const obj = await store.reader.read(oid);
  return obj && obj.type === "tree" ? treeIds(obj.data, store.oidBytes) : null;
}
