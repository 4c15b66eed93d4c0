// A fetch of named refs from a sync remote, in process where its transport is one this process
// speaks: smart HTTP (git/http-remote.ts), or upload-pack over a connection of this process's own,
// a `git upload-pack` started here for a folder on this disk or a git daemon's over git://
// (git/stream-remote.ts). The objects come in one protocol v2 request (git/upload-pack-v2.ts),
// are read and checked in memory (git/pack-read.ts), written here as loose objects (a pack of
// many kept as a pack: git/keep-pack.ts), then the tracking refs moved to the values the listing
// gave. What `git fetch` of a few refs spent was
// mostly its processes (fetch, the transport, index-pack or unpack-objects, rev-list for the
// connectivity check); and it wrote whatever the remote sent before anything could judge it.
// A remote whose answer passes a bound, or is out of shape once its upload-pack took the request
// (not pkt-lines, an error where the pack was, a pack that does not parse, objects not connected
// to what was asked), has that fetch refused (`bound`, the message says which), nothing written,
// and never handed to git: the same remote could answer git's fetch with what git writes before
// anything judges it. Only a fetch that is git's to make (not the plain case of a transport this
// process speaks, a server that speaks no protocol v2) runs `git fetch`, which does what it
// always did. `doctor --repair` fetches again the same way (refetchNamed).
import { noteRemoteCall } from "../git/remote-calls.ts";
import { fetchOverHttp, httpRemoteStatus } from "../git/http-remote.ts";
import type { GitObject } from "../git/object-reader.ts";
import { fetchOverStream, streamRemoteStatus } from "../git/stream-remote.ts";
import { fetchFromFolder } from "../git/folder-fetch.ts";
import { commitLinks, treeEntries } from "../git/tree-object.ts";
import { fsckOnFetch, writeFetchedPack } from "../git/keep-pack.ts";
import { setAsideDamagedLoose } from "../git/damaged-loose.ts";
import { fetchHandoffRefs, type FetchResult } from "../git/fetch-refs.ts";
import { trackingRef } from "../git/tracking-ref.ts";
import { outOfShape, type FetchAnswer, type GitsFetch } from "../git/upload-pack-v2.ts";
import type { Store } from "../store/store.ts";

/**
 * Fetches `refs` at the values `listed` gives into their tracking refs (whose values now are
 * `tracked`), offering `haves`: in one request of this process's where it can be, else (or when
 * that is git's to do) with `git fetch`. `timeoutMs` is asked at each attempt (what the budget
 * has left); `signal` aborted ends it as the deadline would.
 */
export async function fetchNamed(store: Store, remote: string, refs: string[], listed: ReadonlyMap<string, string>, tracked: ReadonlyMap<string, string>, haves: string[], timeoutMs: () => number, signal?: AbortSignal): Promise<FetchResult> {
  const got = await fetchNamedInProcess(store, remote, refs, listed, tracked, haves, timeoutMs, signal);
  return "gits" in got ? fetchHandoffRefs(store.storeCwd, remote, timeoutMs(), refs, { haves, ...(signal ? { signal } : {}) }) : got;
}

/**
 * `doctor --repair`'s fetch of `refs` again, whole, at the values `listed` gives: every object
 * sent again (no haves), under the same bounds as any fetch of this process's; a damaged loose
 * copy of an object that came is moved aside first (damaged-loose.ts), so the good one is read.
 * Where the fetch is git's, `git fetch --refetch`, which no bound of this process's reaches.
 * `moved`: the damaged loose objects moved aside.
 */
export async function refetchNamed(store: Store, remote: string, refs: string[], listed: ReadonlyMap<string, string>, tracked: ReadonlyMap<string, string>, timeoutMs: () => number): Promise<FetchResult & { moved?: string[] }> {
  const moved: string[] = [];
  const got = await fetchNamedInProcess(store, remote, refs, listed, tracked, [], timeoutMs, undefined, (objects) => moved.push(...setAsideDamagedLoose(store.repo.storeDir, objects.keys())));
  if ("gits" in got) return fetchHandoffRefs(store.storeCwd, remote, timeoutMs(), refs, { refetch: true });
  return moved.length ? { ...got, moved } : got;
}

/** Whether fetches from `remote` are this process's (the plain case of one of its transports). */
export function fetchesInProcess(store: Store, remote: string): boolean {
  return httpRemoteStatus(store.remoteSource, remote)?.inProcess === true || streamRemoteStatus(store.remoteSource, remote)?.inProcess === true;
}

/**
 * fetchNamed in process; `gits` when this is git's to do. `again`: a fetch again (doctor
 * --repair, no haves), which sees the objects that passed every check before any is written.
 */
async function fetchNamedInProcess(
  store: Store,
  remote: string,
  refs: string[],
  listed: ReadonlyMap<string, string>,
  tracked: ReadonlyMap<string, string>,
  haves: string[],
  timeoutMs: () => number,
  signal?: AbortSignal,
  again?: (objects: Map<string, GitObject>) => void,
): Promise<FetchResult | GitsFetch> {
  const wants = refs.map((r) => listed.get(r));
  if (!refs.length || wants.some((w) => w === undefined)) return { gits: "a ref asked for is not in the listing" };
  // Many objects (a fresh clone's first sync) are kept as the pack they came in, and git checks
  // them all first where the clone asks it to (keep-pack.ts).
  const strict = fsckOnFetch(store.remoteSource.config);
  // A folder on this disk whose new objects are loose there: read from its files (folder-fetch.ts);
  // not for a fetch again, which asks for every object below the wants.
  const inFolder = strict || again ? null : await fetchFromFolder(store.remoteSource, remote, refs.map((r, k) => ({ new: wants[k]!, expected: tracked.get(r) ?? null })), (oid) => store.reader.readHere(oid));
  // What the folder's files hold that leaves a gap (a walk shorter than the history) is upload-pack's.
  const fromFolder = inFolder && !(await unconnected(store, inFolder, wants as string[], new Set(haves))) ? { ok: true as const, objects: inFolder, pack: NO_PACK } : null;
  const got = fromFolder ?? (await inProcessAnswer(store, remote, wants as string[], haves, timeoutMs, signal));
  if ("gits" in got) return got;
  noteRemoteCall(store.storeCwd, remote, "fetch");
  if (!got.ok) return got;
  const gap = got === fromFolder ? null : await unconnected(store, got.objects, wants as string[], new Set(haves));
  if (gap) return outOfShape(remote, gap);
  again?.(got.objects);
  const written = await writeFetchedPack(store.storeCwd, `${store.repo.storeDir}/objects`, got.pack, got.objects.size, strict, Math.max(1000, timeoutMs()));
  if (written && !written.ok && strict) return { ok: false, message: `git's checks of the fetched objects (fetch.fsckObjects) refused them: ${written.message}` };
  const kept = written?.ok ? written : null;
  try {
    // This clone's own failures are neither the remote's nor git's: said as they are, nothing
    // kept back, nothing handed to git (the caller's next fetch tries again).
    if (!kept) for (const [oid, o] of got.objects) if (store.writer.write(o.type, o.data) !== oid) return { ok: false, message: `the fetched object ${oid} was written here under another id` };
    // Forced, as the fetch refspec's `+` is: the remote's value is the tracking ref's, whatever it was.
    const moved = await moveTracking(store, remote, refs, listed, tracked);
    // git's words kept: a lock a killed git left names its file, which the caller says is stale.
    return moved.ok ? { ok: true } : { ok: false, message: `the tracking refs of ${remote} could not be moved to what was fetched: ${moved.message}` };
  } finally {
    kept?.release();
  }
}

/**
 * The tracking refs of `refs` moved to the values `listed` gives, whatever they hold, as `git
 * fetch` with a `+` refspec moves them. `tracked` is what the caller read before its fetch;
 * another process of this clone (four agents' syncs at once) may have moved one meanwhile with
 * its own fetch or push: then the values read now are the ones replaced (a few times at most, a
 * moment apart: a lock that stays, left by a killed git, fails alike each time and is said in
 * git's words).
 */
async function moveTracking(store: Store, remote: string, refs: string[], listed: ReadonlyMap<string, string>, tracked: ReadonlyMap<string, string>) {
  const to = (old: (r: string) => string | null) => refs.map((r) => ({ ref: trackingRef(remote, r), new: listed.get(r)!, old: old(r) }));
  let moved = await store.updateRefs(to((r) => tracked.get(r) ?? null));
  for (let n = 0; !moved.ok && n < 3; n++) {
    // A push of this clone's moves its tracking ref under the ref's lock for a moment: wait it out.
    await new Promise((res) => setTimeout(res, 10 + Math.random() * 30 * (n + 1)));
    const now = new Map(await Promise.all(refs.map(async (r) => [r, await store.readRef(trackingRef(remote, r))] as const)));
    moved = await store.updateRefs(to((r) => now.get(r) ?? null));
  }
  return moved;
}

/** The pack of objects read one by one (folder-fetch.ts): fewer than keep-pack.ts keeps, never written as a pack. */
const NO_PACK = Buffer.alloc(0);

/**
 * The remote's answer to a fetch of `wants` over the first transport of this process's that takes
 * it. A throw in the reading of an answer is this process's own failure: said as such, not git's.
 */
async function inProcessAnswer(store: Store, remote: string, wants: string[], haves: string[], timeoutMs: () => number, signal?: AbortSignal): Promise<FetchAnswer | GitsFetch> {
  const failed = (e: unknown): FetchAnswer => ({ ok: false, message: `the fetch from ${remote} failed in this process: ${(e as Error)?.message ?? e}`, timedOut: false });
  const http = await fetchOverHttp(store.remoteSource, remote, wants, haves, timeoutMs(), signal).catch(failed);
  if (!("gits" in http)) return http;
  return fetchOverStream(store.remoteSource, remote, wants, haves, timeoutMs(), signal).catch(failed);
}

/**
 * What git's connectivity check makes sure of after a fetch: each wanted commit is here, and every
 * object the new ones name is either in the pack or already here (the offered commits are,
 * whole: the remote left out only what they reach). What is missing, in words, or null.
 */
async function unconnected(store: Store, objects: Map<string, GitObject>, wants: string[], haves: Set<string>): Promise<string | null> {
  const known = new Set<string>(haves);
  const here = async (oid: string) => {
    if (objects.has(oid) || known.has(oid)) return true;
    // Its header only (a large blob is not read whole to learn it is here).
    if (!(await store.reader.info(oid))) return false;
    known.add(oid);
    return true;
  };
  for (const w of wants) if (!(await here(w))) return `a pack without the commit ${w} asked for`;
  for (const [oid, o] of objects) {
    if (o.type === "commit") {
      const head = commitLinks(o.data);
      if (!head.tree) return `a commit ${oid} that names no tree`;
      for (const id of [head.tree, ...head.parents]) if (!(await here(id))) return `a pack without ${id}, which its commit ${oid} names`;
    } else if (o.type === "tree") {
      const entries = treeEntries(o.data, store.oidBytes, "latin1");
      if (!entries) return `a tree ${oid} that is not well formed`;
      for (const e of entries) if (e.mode !== "160000" && !(await here(e.oid))) return `a pack without ${e.oid}, which its tree ${oid} names`;
    } else if (o.type === "tag") return `a tag object ${oid}, which no ref under refs/handoff/ holds`;
  }
  return null;
}
