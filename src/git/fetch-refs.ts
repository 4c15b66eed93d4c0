// Talking to a sync remote by `git fetch`: git's own transports, credentials and ssh config, read
// from exit codes, never from prose. The fetch, its retries and what it offers as haves, on their
// own (pushes: push-lease.ts; listings: remote-listing.ts).
import { noteRemoteCall } from "./remote-calls.ts";
import { failure, type RemoteFailure } from "./remote-failure.ts";
import { cleanRemoteText } from "./remote-text.ts";
import { git } from "./run.ts";
import { remotePrefix, toRemote } from "./ref-prefix.ts";
import { trackingPrefix, trackingRef } from "./tracking-ref.ts";

export type FetchResult = { ok: true } | RemoteFailure;

/** git fetch's words when a tracking ref's lock (or packed-refs') was held by another process. */
const LOCKED = /cannot lock ref|\.lock'?: File exists|unable to update local ref/i;

/**
 * Mirrors the remote's refs/handoff/* into the tracking refs, pruning those the remote deleted.
 * The glob refspec makes git ask only for the `refs/handoff/` prefix (protocol v2 `ref-prefix`),
 * and objects already present are not transferred: with nothing new it is one advertisement.
 * The refspec is given on the command line, so `remote.<name>.fetch` is never touched.
 * `refs` may hold patterns (one `*`, e.g. refs/handoff/tasks/* or refs/handoff/results/t-1*): a
 * pattern that matches nothing on the remote is no error, where a missing exact name is fatal.
 * `prune` with `refs`: tracking refs those patterns cover that the remote lacks are removed.
 * Every call runs under `timeoutMs`, retries included; `signal` aborted ends it as the deadline would.
 */
export async function fetchHandoffRefs(cwd: string, remote: string, timeoutMs: number, refs?: string[], opts: { refetch?: boolean; prune?: boolean; haves?: string[]; signal?: AbortSignal } = {}): Promise<FetchResult> {
  // No refs named is nothing to fetch (sync's halves of a single ref are none and that one, in
  // process or not): `git fetch <remote>` without a refspec would fetch the remote's configured
  // refspec, the user's branches, which are theirs to fetch, from the very server refused.
  if (refs && !refs.length) return { ok: true };
  const prefix = await remotePrefix(cwd, remote);
  const specs = refs ? refs.map((r) => `+${toRemote(r, prefix)}:${trackingRef(remote, r)}`) : [`+${prefix}*:${trackingPrefix(remote)}*`];
  const until = Date.now() + timeoutMs;
  let r;
  for (let n = 0; ; n++) {
    noteRemoteCall(cwd, remote, "fetch");
    const offer = negotiation(opts.haves);
    r = await git(
      // --refetch: transfer every object again, not only those missing by negotiation (a repair
      // of refs whose objects are partly missing: git would take the present commit as complete).
      // --no-filter: in a partial clone (`clone --filter=blob:none`) the records' blobs would stay
      // on the remote, and receive, which reads a task's history whole on first sight, would have
      // git fetch each one in a process of its own (eight for two small tasks).
      [...offer.config, "fetch", ...offer.options, "--quiet", "--no-tags", "--no-filter", ...(!refs || opts.prune ? ["--prune"] : []), ...(opts.refetch ? ["--refetch"] : []), "--no-write-fetch-head", "--no-auto-gc", "--no-recurse-submodules", remote, ...specs],
      { cwd, env: { GIT_TERMINAL_PROMPT: "0" }, timeoutMs: until - Date.now(), ...(opts.signal ? { signal: opts.signal } : {}) },
    );
    if (r.code === 0 && !r.timedOut) return { ok: true };
    // An offered commit this clone lost (a damaged repository): fetch as git would by default.
    if (opts.haves && !r.timedOut && r.code === 128 && /does not exist|is not a valid object/.test(r.stderr)) {
      opts = { ...opts, haves: undefined };
      continue;
    }
    // Exit 128 is fatal (no connection, no repository). Exit 1 with a lock in the way means the
    // transfer worked but a tracking ref could not be updated: another process of this clone was
    // fetching it too, and a retry goes through. Any other exit 1 (a tracking ref naming an object
    // this clone lost: "bad object", "did not send all necessary objects") fails the same way
    // every time: retried, it only used up the deadline (nine fetches) before saying so.
    if (r.timedOut || r.code !== 1 || !LOCKED.test(r.stderr) || n >= 8 || Date.now() >= until - 100) break;
    await new Promise((res) => setTimeout(res, 20 + Math.random() * 40 * (n + 1)));
  }
  const failed = failure(r, "git fetch");
  // The remote's own words say why better than what its failure made this side print first
  // ("git-pack-objects died with error" or "bad pack header" come before or after them).
  const said = r.timedOut ? undefined : r.stderr.split("\n").find((l) => /^remote: (fatal|error):/.test(l));
  return said ? { ...failed, message: cleanRemoteText(said) } : failed;
}

/**
 * What a fetch offers the remote as "have"s. By default git offers commits from every local ref,
 * newest first, and a fetch that wants a commit with no parent here (a new task, its inputs, a new
 * result) can never find a common base: git goes on offering commits in vain, in growing batches,
 * one HTTP round trip per batch (up to 7 requests instead of 2 in a clone with some history).
 * `haves`: the commits worth offering (the fetched refs' own earlier tips, objects this clone
 * has), and nothing else; none at all when the clone has none of them (nothing to negotiate with).
 */
function negotiation(haves: string[] | undefined): { config: string[]; options: string[] } {
  if (!haves) return { config: [], options: [] };
  const tips = [...new Set(haves)].filter((h) => /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(h));
  if (!tips.length) return { config: ["-c", "fetch.negotiationAlgorithm=noop"], options: [] };
  return { config: [], options: tips.map((h) => `--negotiation-tip=${h}`) };
}
