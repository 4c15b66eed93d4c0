// A fetch of many changed refs taken apart: from a remote fetched in process, in parts of
// IN_PROCESS_PART; after a fetch that failed, in halves down to the refs the remote cannot send,
// so one such ref is kept back and the rest still come. Split out of tracking.ts: the refresh
// calls it only when a plain fetch of everything changed would not do.
import type { FetchResult } from "../git/fetch-refs.ts";
import type { RemoteBudget } from "./remote-budget.ts";

/** Above this many changed refs one glob fetch is cheaper than naming each. */
export const NAMED_FETCH_LIMIT = 200;

/**
 * From a remote fetched in process (no glob fetch), this many refs a fetch: each part's pack is
 * kept as a pack (keep-pack.ts), so a fresh clone of 10,000 tasks ends with 20 packs, not the 50
 * past which git's `gc --auto` repacks on the user's next commit; a part stays far under the
 * bounds on one answer (pack-read.ts), and one past them is fetched again in halves.
 */
const IN_PROCESS_PART = 500;

/**
 * Words of git's that say an object could not be read or sent, not that the remote is out of reach
 * (and git's checks refusing what came, under fetch.fsckObjects: keep-pack.ts).
 */
const OBJECT_TROUBLE = /tree object|malformed|corrupt|bad (tree|object|commit|blob)|unable to read [0-9a-f]{7}|pack-objects died|did not send all necessary objects|missing (blob|tree|commit|object)|invalid object|fsckObjects/i;

/** `refs` fetched by `fetch` IN_PROCESS_PART at a time, in order; the first failure ends it. */
export async function inParts(refs: string[], fetch: (part: string[]) => Promise<FetchResult>): Promise<FetchResult> {
  for (let i = 0; i < refs.length; i += IN_PROCESS_PART) {
    const f = await fetch(refs.slice(i, i + IN_PROCESS_PART));
    if (!f.ok) return f;
  }
  return { ok: true };
}

/**
 * After fetches of all of `refs` failed (by name, or by pattern when there were too many to
 * name): the refs in halves, and halves of the halves that fail, down to the refs that fail alone
 * (a few fetches per such ref, not one per ref). Returns those the remote could not send (with
 * git's message) when others came or the failures name an object, else null: the remote itself
 * is out of reach, or the budget ran out, and the caller reports that.
 */
export async function fetchAlone(b: RemoteBudget, refs: string[], fetchPart: (part: string[]) => Promise<FetchResult>): Promise<Map<string, string> | null> {
  const failed = new Map<string, string>();
  /** Refs whose fetch was refused for what the remote answered (past a bound, out of shape): it answered, so it is not out of reach. */
  const bounded = new Set<string>();
  const objectTrouble = ([ref, m]: [string, string]) => bounded.has(ref) || OBJECT_TROUBLE.test(m);
  let fetched = 0;
  let gaveUp = false;
  const fetch = async (part: string[], knownToFail: boolean): Promise<void> => {
    if (gaveUp || Date.now() >= b.until - 100) {
      gaveUp = true;
      return;
    }
    if (!knownToFail) {
      const f = await fetchPart(part);
      if (f.ok) {
        fetched += part.length;
        return;
      }
      if (f.timedOut) {
        gaveUp = true;
        return;
      }
      if (part.length === 1) {
        // The quarantine's reason: a bound's refusal says itself, git's failure says what git said.
        failed.set(part[0]!, f.bound ? f.message : `the remote could not send it (${f.message})`);
        if (f.bound) bounded.add(part[0]!);
        // Three failures alike and nothing fetched, none naming an object: the remote is gone.
        if (!fetched && failed.size >= 3 && ![...failed].some(objectTrouble)) gaveUp = true;
        return;
      }
    }
    const mid = part.length >> 1;
    await fetch(part.slice(0, mid), false);
    await fetch(part.slice(mid), false);
  };
  // A list short enough to name was just fetched whole, and failed: its halves come first.
  if (refs.length <= NAMED_FETCH_LIMIT) await fetch(refs, true);
  else for (let i = 0; i < refs.length; i += NAMED_FETCH_LIMIT) await fetch(refs.slice(i, i + NAMED_FETCH_LIMIT), false);
  if (gaveUp) return null;
  if (!failed.size) return failed;
  return fetched > 0 || [...failed].every(objectTrouble) ? failed : null;
}

