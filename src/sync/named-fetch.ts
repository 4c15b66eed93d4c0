// A fetch of named refs from a sync remote, in process where its transport is one this process
// speaks: smart HTTP (git/http-remote.ts), or upload-pack over a connection of this process's own,
// a `git upload-pack` started here for a folder on this disk or a git daemon's over git://
// (git/stream-remote.ts). The objects come in one protocol v2 request (git/upload-pack-v2.ts),
// are read and checked in memory (git/pack-read.ts), written here as loose objects (a pack of
// many kept as a pack: git/keep-pack.ts), then the tracking refs moved to the values the listing
// gave. What `git fetch` of a few refs spent was
// mostly its processes (fetch, the transport, index-pack or unpack-objects, rev-list for the
// connectivity check); and it wrote whatever the remote sent before anything could judge it.
// A remote whose answer passes a bound has that fetch refused (`bound`), nothing written, and
// never handed to git. Whenever the fetch is git's, `git fetch` runs as before and does what it
// always did.
import { noteRemoteCall } from "../git/remote-calls.ts";
import { fetchOverHttp, httpRemoteStatus } from "../git/http-remote.ts";
import type { GitObject } from "../git/object-reader.ts";
import { fetchOverStream, streamRemoteStatus } from "../git/stream-remote.ts";
import { fetchFromFolder } from "../git/folder-fetch.ts";
import { commitLinks, treeEntries } from "../git/tree-object.ts";
import { fsckOnFetch, writeFetchedPack } from "../git/keep-pack.ts";
import { fetchHandoffRefs, trackingRef, type FetchResult } from "../git/remote.ts";
import type { Store } from "../store/store.ts";

/**
 * Fetches `refs` at the values `listed` gives into their tracking refs (whose values now are
 * `tracked`), offering `haves`: in one request of this process's where it can be, else (or when
 * that is git's to do) with `git fetch`. `timeoutMs` is asked at each attempt (what the budget
 * has left); `signal` aborted ends it as the deadline would.
 */
export async function fetchNamed(store: Store, remote: string, refs: string[], listed: ReadonlyMap<string, string>, tracked: ReadonlyMap<string, string>, haves: string[], timeoutMs: () => number, signal?: AbortSignal): Promise<FetchResult> {
  return (await fetchNamedInProcess(store, remote, refs, listed, tracked, haves, timeoutMs, signal)) ?? (await fetchHandoffRefs(store.storeCwd, remote, timeoutMs(), refs, { haves, ...(signal ? { signal } : {}) }));
}

/** Whether fetches from `remote` are this process's (the plain case of one of its transports). */
export function fetchesInProcess(store: Store, remote: string): boolean {
  return httpRemoteStatus(store.remoteSource, remote)?.inProcess === true || streamRemoteStatus(store.remoteSource, remote)?.inProcess === true;
}

/** fetchNamed in process; null when this is git's to do. */
async function fetchNamedInProcess(store: Store, remote: string, refs: string[], listed: ReadonlyMap<string, string>, tracked: ReadonlyMap<string, string>, haves: string[], timeoutMs: () => number, signal?: AbortSignal): Promise<FetchResult | null> {
  const wants = refs.map((r) => listed.get(r));
  if (!refs.length || wants.some((w) => w === undefined)) return null;
  // Many objects (a fresh clone's first sync) are kept as the pack they came in, and git checks
  // them all first where the clone asks it to (keep-pack.ts).
  const strict = fsckOnFetch(store.remoteSource.config);
  // A folder on this disk whose new objects are loose there: read from its files (folder-fetch.ts).
  const inFolder = strict ? null : await fetchFromFolder(store.remoteSource, remote, refs.map((r, k) => ({ new: wants[k]!, expected: tracked.get(r) ?? null })), (oid) => store.reader.readHere(oid));
  const got =
    (inFolder && { ok: true as const, objects: inFolder, pack: NO_PACK }) ??
    (await fetchOverHttp(store.remoteSource, remote, wants as string[], haves, timeoutMs(), signal).catch(() => null)) ??
    (await fetchOverStream(store.remoteSource, remote, wants as string[], haves, timeoutMs(), signal).catch(() => null));
  if (!got) return null;
  noteRemoteCall(store.storeCwd, remote, "fetch");
  if (!got.ok) return got;
  if (!(await connected(store, got.objects, wants as string[], new Set(haves)))) return null;
  const written = await writeFetchedPack(store.storeCwd, `${store.repo.storeDir}/objects`, got.pack, got.objects.size, strict, Math.max(1000, timeoutMs()));
  if (written && !written.ok && strict) return { ok: false, message: `git's checks of the fetched objects (fetch.fsckObjects) refused them: ${written.message}` };
  const kept = written?.ok ? written : null;
  try {
    if (!kept) for (const [oid, o] of got.objects) if (store.writer.write(o.type, o.data) !== oid) return null;
    // Forced, as the fetch refspec's `+` is: the remote's value is the tracking ref's, whatever it was.
    const moved = await store.updateRefs(refs.map((r) => ({ ref: trackingRef(remote, r), new: listed.get(r)!, old: tracked.get(r) ?? null })));
    return moved.ok ? { ok: true } : null;
  } finally {
    kept?.release();
  }
}

/** The pack of objects read one by one (folder-fetch.ts): fewer than keep-pack.ts keeps, never written as a pack. */
const NO_PACK = Buffer.alloc(0);

/**
 * What git's connectivity check makes sure of after a fetch: each wanted commit is here, and every
 * object the new ones name is either in the pack or already here (the offered commits are,
 * whole: the remote left out only what they reach).
 */
async function connected(store: Store, objects: Map<string, GitObject>, wants: string[], haves: Set<string>): Promise<boolean> {
  const known = new Set<string>(haves);
  const here = async (oid: string) => {
    if (objects.has(oid) || known.has(oid)) return true;
    // Its header only (a large blob is not read whole to learn it is here).
    if (!(await store.reader.info(oid))) return false;
    known.add(oid);
    return true;
  };
  for (const w of wants) if (!(await here(w))) return false;
  for (const o of objects.values()) {
    if (o.type === "commit") {
      const head = commitLinks(o.data);
      if (!head.tree) return false;
      for (const id of [head.tree, ...head.parents]) if (!(await here(id))) return false;
    } else if (o.type === "tree") {
      const entries = treeEntries(o.data, store.oidBytes, "latin1");
      if (!entries) return false;
      for (const e of entries) if (e.mode !== "160000" && !(await here(e.oid))) return false;
    } else if (o.type === "tag") return false; // never written under refs/handoff/: git's to judge
  }
  return true;
}
