// The remote's refs/handoff/* listed (one advertisement, no objects), the parse of that listing
// kept per remote, and what it showed of a second coordination namespace. Split out of remote.ts:
// sync lists before it fetches, and the listing's caches are state of their own.
import { noteRemoteCall } from "./remote-calls.ts";
import { failure, type RemoteFailure } from "./remote-failure.ts";
import { fromRemote, remotePrefix, splitIn, splitPatterns, toRemote, type NamespaceSplit } from "./ref-prefix.ts";
export type { NamespaceSplit } from "./ref-prefix.ts";
import { type PathRemoteSource, type StampedListing } from "./path-remote.ts";
import { listRemote } from "./remote-ref.ts";

/**
 * The remote's refs/handoff/* and their values: one advertisement, no objects. Cheaper than a
 * fetch with nothing new (which still checks every ref), so sync asks this first. With `refs`,
 * only those (the check after a push whose outcome is unknown). A whole listing read from a
 * remote on this disk carries the `stamp` of the ref files it was read from; given `known`, an
 * earlier such listing (its text and stamp), it is that listing again while the stamp holds.
 */
export async function lsRemoteHandoff(
  cwd: string,
  remote: string,
  timeoutMs: number,
  refs?: string[],
  source?: PathRemoteSource,
  known?: StampedListing,
): Promise<{ ok: true; tips: Map<string, string>; raw: string; prefix: string; stamp?: string } | RemoteFailure> {
  noteRemoteCall(cwd, remote, "ls-remote");
  const prefix = await remotePrefix(cwd, remote);
  // In process where it can be (on this disk, over HTTP), in git's own output form.
  const names = refs?.map((x) => toRemote(x, prefix));
  const r = await listRemote(cwd, remote, prefix, names ?? [`${prefix}*`, ...splitPatterns(prefix)], timeoutMs, source, names, undefined, refs ? undefined : known);
  if ("message" in r) return r;
  if (r.code !== 0 || r.timedOut) return failure(r, "git ls-remote");
  if (!refs) noteSplit(`${cwd}\0${remote}`, splitIn(r.stdout, prefix));
  // The same answer as the last full listing (a running process's sync with nothing new): the
  // same map, not 5,000 lines parsed again. Callers only read it.
  const key = refs ? null : `${cwd}\0${remote}\0${prefix}`;
  const last = key ? lastListing.get(key) : undefined;
  const stamp = "stamp" in r && r.stamp !== undefined ? { stamp: r.stamp } : {};
  if (last && last.stdout === r.stdout) return { ok: true, tips: last.tips, raw: r.stdout, prefix, ...stamp };
  // Parsed when first read: a sync that finds the listing it remembers never reads it (quiet-sync.ts).
  let parsed: Map<string, string> | undefined;
  return {
    ok: true,
    get tips() {
      return (parsed ??= parseListing(r.stdout, prefix, refs, key));
    },
    raw: r.stdout,
    prefix,
    ...stamp,
  };
}

function parseListing(stdout: string, prefix: string, refs: string[] | undefined, key: string | null): Map<string, string> {
  const tips = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const tab = line.indexOf("\t");
    const ref = tab > 0 ? fromRemote(line.slice(tab + 1), prefix) : null;
    if (ref) tips.set(ref, line.slice(0, tab));
  }
  if (refs) for (const k of [...tips.keys()]) if (!refs.includes(k)) tips.delete(k);
  if (key) {
    lastListing.delete(key);
    lastListing.set(key, { stdout, tips });
    // A process syncs with a clone or two; one that went through many keeps the latest few.
    if (lastListing.size > LISTINGS_KEPT) lastListing.delete(lastListing.keys().next().value!);
  }
  return tips;
}

/** Coordination refs the last full listing found in the other namespace (ref-prefix.ts), by clone and remote. */
const splits = new Map<string, NamespaceSplit>();

function noteSplit(key: string, split: NamespaceSplit | null): void {
  if (split) splits.set(key, split);
  else splits.delete(key);
}

/** What the last full listing of `remote` in this process found of a second coordination namespace, or null. */
export function namespaceSplit(cwd: string, remote: string): NamespaceSplit | null {
  return splits.get(`${cwd}\0${remote}`) ?? null;
}

/** Each remote's last full listing and its parse, by clone, remote and prefix, oldest first. */
const lastListing = new Map<string, { stdout: string; tips: Map<string, string> }>();
const LISTINGS_KEPT = 4;
