// Memories at refs/handoff/memories/<id>: one ref each, so writers never contend. Adding is a
// create-only compare-and-swap; an edit or removal is a compare-and-swap on that memory's ref.
import { parseDuration } from "../core/duration.ts";
import { fail, HandoffError } from "../core/errors.ts";
import { validateTaskId } from "../core/ids.ts";
import { byRecency, Memory, MEMORY_FORMAT, memoriesForContext, memoryEvent, memoryTextProblem, validateMemoryId, validateTags } from "../core/memory.ts";
import { writeSteps } from "./codec.ts";
import { freshBytes } from "./entropy.ts";
import { REF_ROOT, type Store } from "./store.ts";

export const MEMORIES_PREFIX = `${REF_ROOT}memories/`;
export const MEMORY_FILE = "memory.json";
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

export function memoryRef(id: string): string {
  return MEMORIES_PREFIX + validateMemoryId(id);
}

function newMemoryId(): string {
  const r = freshBytes(10);
  let id = "m-";
  for (let i = 0; i < 10; i++) id += ALPHABET[r[i]! & 31];
  return id;
}

function checkText(text: string): string {
  const problem = memoryTextProblem(text);
  if (problem) fail("invalid_input", `memory text ${problem}`);
  return text.replace(/\s+$/, "");
}

export interface MemoryInput {
  text: string;
  tags?: string[];
  task?: string | null;
}

export async function addMemory(store: Store, input: MemoryInput): Promise<Memory> {
  const text = checkText(input.text);
  const tags = validateTags(input.tags ?? []);
  const task = input.task ? validateTaskId(input.task) : null;
  return store.casLoop(async (now) => {
    const id = newMemoryId();
    const at = now.toISOString();
    const m: Memory = { format: MEMORY_FORMAT, id, text, tags, task, author: store.actor.agent, created_at: at, updated_at: at, updated_by: store.actor.agent };
    const tip = writeSteps(store, null, MEMORY_FILE, [{ event: memoryEvent("memory_added", m, store.actor, now), record: m }]);
    return { updates: [{ ref: memoryRef(id), new: tip, old: null }], result: m };
  });
}

async function loadAt(store: Store, ref: string, oid: string): Promise<Memory> {
  return store.record(ref, oid, MEMORY_FILE, Memory);
}

export async function loadMemory(store: Store, id: string): Promise<{ memory: Memory; tip: string }> {
  const ref = memoryRef(id);
  const tip = await store.readRef(ref);
  const memory = tip ? await loadAt(store, ref, tip) : null;
  if (!tip || !memory || memory.removed) fail("not_found", `no memory ${id}`, { memory: id }, [{ action: "fix_input", detail: "list memories: git handoff memory list" }]);
  return { memory, tip };
}

export interface MemoryFilter {
  task?: string;
  tag?: string;
  since?: string;
  limit?: number;
}

/** Every memory (newest first), filtered; unreadable ones are reported, not fatal. */
export async function listMemories(store: Store, f: MemoryFilter = {}): Promise<{ memories: Memory[]; problems: string[] }> {
  const sinceMs = f.since ? store.now().getTime() - parseDuration(f.since, "--since") : -Infinity;
  if (f.task) validateTaskId(f.task);
  const tag = f.tag?.toLowerCase();
  const memories: Memory[] = [];
  const problems: string[] = [];
  for (const { name, oid } of await store.listRefs(MEMORIES_PREFIX)) {
    try {
      memories.push(await loadAt(store, name, oid));
    } catch (e) {
      if (!(e instanceof HandoffError)) throw e;
      problems.push(e.message);
    }
  }
  const out = memories
    .filter((m) => !m.removed && (!f.task || m.task === f.task) && (!tag || m.tags.includes(tag)) && Date.parse(m.updated_at) >= sinceMs)
    .sort(byRecency);
  return { memories: f.limit ? out.slice(0, f.limit) : out, problems };
}

export interface MemoryEdit {
  text?: string;
  tags?: string[];
  task?: string | null;
}

export async function editMemory(store: Store, id: string, edit: MemoryEdit): Promise<Memory> {
  if (edit.text === undefined && edit.tags === undefined && edit.task === undefined) {
    fail("invalid_input", "nothing to change: give --text, --file, --tag or --task");
  }
  const text = edit.text === undefined ? undefined : checkText(edit.text);
  const tags = edit.tags === undefined ? undefined : validateTags(edit.tags);
  const task = edit.task === undefined ? undefined : edit.task === null ? null : validateTaskId(edit.task);
  return store.casLoop(async (now) => {
    const { memory, tip } = await loadMemory(store, id);
    const next: Memory = { ...memory, ...(text !== undefined ? { text } : {}), ...(tags !== undefined ? { tags } : {}), ...(task !== undefined ? { task } : {}), updated_at: now.toISOString(), updated_by: store.actor.agent };
    const commit = writeSteps(store, tip, MEMORY_FILE, [{ event: memoryEvent("memory_edited", next, store.actor, now), record: next }]);
    return { updates: [{ ref: memoryRef(id), new: commit, old: tip }], result: next };
  });
}

/**
 * Removes a memory by writing a tombstone on its ref rather than deleting the ref: a deletion would
 * not reach other clones (sync brings back a ref this clone lacks), a tombstone syncs like any edit.
 */
export async function removeMemory(store: Store, id: string): Promise<Memory> {
  return store.casLoop(async (now) => {
    const { memory, tip } = await loadMemory(store, id);
    const gone: Memory = { ...memory, removed: true, updated_at: now.toISOString(), updated_by: store.actor.agent };
    const commit = writeSteps(store, tip, MEMORY_FILE, [{ event: memoryEvent("memory_removed", gone, store.actor, now), record: gone }]);
    return { updates: [{ ref: memoryRef(id), new: commit, old: tip }], result: gone };
  });
}

/**
 * The memories an agent starts a session with (SessionStart hook, MCP load_context): those about
 * its claimed tasks first, then the project's newest, within the policy's `memory_budget`.
 */
export async function contextMemories(store: Store, myTasks: string[]): Promise<{ shown: Memory[]; omitted: number }> {
  const { memories } = await listMemories(store);
  return memoriesForContext(memories, new Set(myTasks), store.config.memoryBudget);
}
