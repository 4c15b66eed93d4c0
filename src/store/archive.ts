// Compaction: finished tasks older than the retention period leave the live set (every push
// advertises every live ref) for one archive ref. The archive commit keeps each task's final
// record in its tree and the task's own history as an extra parent, so `events` and `git log`
// still read it. A handed-over task's inputs and results (refs/handoff/inputs/<id>,
// refs/handoff/results/<id>) are deleted with it and not archived: they are files for the one who
// waited, and keeping them would make every clone carry every result forever.
import { dirname, join } from "node:path";
import { isFinal, Task } from "../core/task.ts";
import { listRefs, readRef, type RefUpdate } from "../git/refs.ts";
import { encodeFiles, FORMAT_MARKER, parseTree, readRecord, readTyped } from "./codec.ts";
import { readCommit } from "./history.ts";
import { ownFolder, readTextNoFollow, replaceFile } from "../git/safe-file.ts";
import { REF_ROOT, type Store } from "./store.ts";
import { TASKS_PREFIX } from "./task-store.ts";

export const ARCHIVE_REF = `${REF_ROOT}archive`;
/** Tasks per archive commit: bounds the commit's parent list and the push. */
const BATCH = 200;
/** The refs beside a task that leave with it (written by the handover in work/bundle.ts). */
const TASK_FILE_REFS = (id: string) => [`${REF_ROOT}inputs/${id}`, `${REF_ROOT}results/${id}`];

export interface CompactReport {
  archived: string[];
  /** When the next finished task becomes old enough, or null when none is waiting. */
  next_due: string | null;
  retention_ms: number;
}

export interface ArchiveBody {
  archived: Record<string, string>;
  at: string;
}

function archiveMessage(body: ArchiveBody): string {
  const ids = Object.keys(body.archived);
  const shown = ids.slice(0, 8).join(", ") + (ids.length > 8 ? `, … (${ids.length - 8} more)` : "");
  return `archived ${ids.length} task${ids.length === 1 ? "" : "s"}: ${shown}\n\n${JSON.stringify(body, null, 2)}\n`;
}

export function parseBody(message: string): ArchiveBody | null {
  const start = message.indexOf("\n\n{");
  if (start < 0) return null;
  try {
    const body = JSON.parse(message.slice(start + 2)) as ArchiveBody;
    return body && typeof body.archived === "object" ? body : null;
  } catch {
    return null;
  }
}

export async function compact(store: Store, opts: { batch?: number } = {}): Promise<CompactReport> {
  const retention = store.config.retentionMs;
  // Never tentatively: an archive written offline could only be replayed by overwriting another
  // clone's archive. Without the remote, compaction waits.
  const saved = store.syncOptions;
  store.syncOptions = { ...saved, offline: false };
  try {
    return await compactNow(store, retention, opts);
  } finally {
    store.syncOptions = saved;
  }
}

async function compactNow(store: Store, retention: number, opts: { batch?: number }): Promise<CompactReport> {
  let nextDue: number | null = null;
  const archived = await store.casLoop(
    async (now) => {
      nextDue = null;
      const cutoff = now.getTime() - retention;
      const old: { id: string; ref: string; tip: string; task: Task }[] = [];
      for (const { name, oid } of await listRefs(store.storeCwd, TASKS_PREFIX)) {
        const { record } = await readRecord(store.reader, store.oidBytes, oid, name, "task.json", Task);
        if (!isFinal(record.status)) continue;
        const finished = Date.parse(record.updated_at);
        if (finished <= cutoff) old.push({ id: record.id, ref: name, tip: oid, task: record });
        else nextDue = Math.min(nextDue ?? Infinity, finished + retention);
      }
      const batch = old.slice(0, opts.batch ?? BATCH);
      if (!batch.length) return { updates: [], result: [] as string[] };
      if (old.length > batch.length) nextDue = now.getTime();
      const tip = await readRef(store.storeCwd, ARCHIVE_REF);
      const files = tip ? parseTree(await readTyped(store.reader, (await readCommit(store, tip, ARCHIVE_REF)).tree, "tree", ARCHIVE_REF), store.oidBytes, ARCHIVE_REF) : new Map<string, string>();
      files.set("format", store.writer.write("blob", FORMAT_MARKER));
      for (const t of batch) files.set(`${t.id}.json`, store.writer.write("blob", JSON.stringify(t.task, null, 2) + "\n"));
      const tree = store.writer.write("tree", encodeFiles(files));
      const body: ArchiveBody = { archived: Object.fromEntries(batch.map((t) => [t.id, t.tip])), at: now.toISOString() };
      const secs = Math.floor(now.getTime() / 1000);
      const who = `${store.actor.agent} <git-handoff@localhost> ${secs} +0000`;
      // The first parent is always the archive's own line (a root commit starts it), so walking
      // first parents never wanders into an archived task's history.
      const base = tip ?? store.writer.write("commit", `tree ${store.writer.write("tree", encodeFiles(new Map([["format", files.get("format")!]])))}\nauthor ${who}\ncommitter ${who}\n\nstart the archive of finished tasks\n`);
      const parents = [base, ...batch.map((t) => t.tip)].map((p) => `parent ${p}\n`).join("");
      const commit = store.writer.write("commit", `tree ${tree}\n${parents}author ${who}\ncommitter ${who}\n\n${archiveMessage(body)}`);
      const updates: RefUpdate[] = [{ ref: ARCHIVE_REF, new: commit, old: tip }, ...batch.map((t) => ({ ref: t.ref, new: null, old: t.tip }))];
      for (const t of batch) {
        for (const ref of TASK_FILE_REFS(t.id)) {
          const at = await store.readRef(ref);
          if (at) updates.push({ ref, new: null, old: at });
        }
      }
      return { updates, result: batch.map((t) => t.id) };
    },
    // Deleting live refs must land on the remote in the same atomic push as the archive.
    { exclusive: true },
  );
  const due = nextDue as number | null;
  return { archived, next_due: due === null ? null : new Date(due).toISOString(), retention_ms: retention };
}

/** Every archived task's last commit (the tip its live ref had), by id. */
export async function archivedTips(store: Store): Promise<Map<string, string>> {
  const tip = await readRef(store.storeCwd, ARCHIVE_REF);
  return tip ? archivedTipsFrom(store, tip) : new Map();
}

/**
 * The entries as the archive's commits state them, newest first. A claim, not a fact: integrate
 * checks each tip before it drops a task on its word (an entry may name any commit).
 */
export async function archivedTipsFrom(store: Store, tip: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let oid: string | undefined = tip;
  for (let n = 0; oid && n < 100_000; n++) {
    const c = await readCommit(store, oid, ARCHIVE_REF);
    const body = parseBody(c.message);
    for (const [id, tip] of Object.entries(body?.archived ?? {})) if (!out.has(id) && typeof tip === "string") out.set(id, tip);
    oid = c.parents[0];
  }
  return out;
}

/**
 * Compacts only when a finished task has come due. A cache under .git/handoff/ (keyed by tips, so
 * it can always be thrown away) remembers, per live task tip, when that task finished; only tasks
 * whose tip moved are read again. A sync with nothing new reads no task record at all.
 */
export async function compactIfDue(store: Store, known?: Map<string, string>): Promise<CompactReport | null> {
  const path = join(store.repo.commonDir, "handoff", "compact.json");
  const tips: [string, string][] = [];
  if (known) {
    for (const entry of known) if (entry[0].startsWith(TASKS_PREFIX)) tips.push(entry);
  } else for (const t of await listRefs(store.storeCwd, TASKS_PREFIX)) tips.push([t.name, t.oid]);
  const cache = finishCache(store, path);
  // Nothing moved since the cache was read or written (a running server's sync with nothing new):
  // it says the same already, and when the first task comes due is known.
  const same = cacheSize(cache) === tips.length && tips.every(([ref, oid]) => cache.tips[ref] === oid);
  let next = same ? cache : await refreshed(store, cache, tips);
  const due = firstDue(next, store.config.retentionMs);
  let report: CompactReport | null = null;
  if (due !== null && due <= store.now().getTime()) {
    report = await compact(store);
    if (next === cache) next = { retention: cache.retention, tips: { ...cache.tips }, finished: { ...cache.finished } };
    for (const id of report.archived) {
      delete next.tips[TASKS_PREFIX + id];
      delete next.finished[TASKS_PREFIX + id];
    }
    // Worked out before the archived tasks left it.
    sizes.delete(next);
    earliest.delete(next);
  }
  if (next === cache) return report;
  ownFolder(dirname(path));
  replaceFile(path, JSON.stringify({ v: COMPACT_CACHE_VERSION, ...next }));
  kept.set(store, next);
  return report;
}

/**
 * When the first finished task comes due for the archive, as this process's last `compactIfDue`
 * left the cache (epoch ms; null when none is finished); undefined before it ran.
 */
export function compactionDue(store: Store): number | null | undefined {
  const cache = kept.get(store);
  return cache ? firstDue(cache, store.config.retentionMs) : undefined;
}

/** The cache for `tips`: entries of unmoved tips kept, moved ones read again. */
async function refreshed(store: Store, cache: FinishCache, tips: [string, string][]): Promise<FinishCache> {
  const next: FinishCache = { retention: cache.retention, tips: {}, finished: {} };
  for (const [ref, oid] of tips) {
    next.tips[ref] = oid;
    if (cache.tips[ref] === oid) {
      if (cache.finished[ref] !== undefined) next.finished[ref] = cache.finished[ref]!;
      continue;
    }
    try {
      const { record } = await readRecord(store.reader, store.oidBytes, oid, ref, "task.json", Task);
      if (isFinal(record.status)) next.finished[ref] = Date.parse(record.updated_at);
    } catch {
      /* unreadable: compaction leaves it alone, doctor reports it */
    }
  }
  return next;
}

/** How many tips a cache holds, counted once per cache object. */
function cacheSize(cache: FinishCache): number {
  let n = sizes.get(cache);
  if (n === undefined) sizes.set(cache, (n = Object.keys(cache.tips).length));
  return n;
}

/** When the first finished task comes due (epoch ms), or null; worked out once per cache object. */
function firstDue(cache: FinishCache, retentionMs: number): number | null {
  let first = earliest.get(cache);
  if (first === undefined) {
    first = Infinity;
    for (const at of Object.values(cache.finished)) if (at < first) first = at;
    earliest.set(cache, first);
  }
  return Number.isFinite(first) ? first + retentionMs : null;
}

const sizes = new WeakMap<FinishCache, number>();
const earliest = new WeakMap<FinishCache, number>();

/**
 * The finish cache as this process last read or wrote it, else from its file. Every entry is a
 * fact about one tip (when the task at that commit finished), so a copy kept in process stays
 * true whatever other processes wrote since; at worst it lacks tips they read, which are read here.
 */
function finishCache(store: Store, path: string): FinishCache {
  const own = kept.get(store);
  if (own && own.retention === store.config.retentionMs) return own;
  let cache: FinishCache = { retention: store.config.retentionMs, tips: {}, finished: {} };
  try {
    const read = JSON.parse(readTextNoFollow(path) ?? "null") as FinishCache & { v?: number };
    if (read.v === COMPACT_CACHE_VERSION && read.retention === store.config.retentionMs && read.tips && read.finished) cache = { retention: read.retention, tips: read.tips, finished: read.finished };
  } catch {
    /* no cache yet, or a damaged one: rebuild */
  }
  kept.set(store, cache);
  return cache;
}

const kept = new WeakMap<Store, FinishCache>();

/**
 * The finish cache's format (its `v`): when each task finished is read from its record, so a build
 * of another task schema must not take it. Bumped with any change of that schema
 * (test/cache-formats.test.ts); a file without it (builds before it) is rebuilt.
 */
export const COMPACT_CACHE_VERSION = 1;

interface FinishCache {
  retention: number;
  /** Live task ref -> the tip the entry below was read from. */
  tips: Record<string, string>;
  /** Live task ref -> when it finished (ms), for finished tasks only. */
  finished: Record<string, number>;
}
