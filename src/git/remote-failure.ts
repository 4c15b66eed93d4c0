// What a failed remote call says: one shape for fetch and listing alike (split out of remote.ts,
// which both used it from), so callers tell a deadline from a refusal without reading prose.
import { cleanRemoteText } from "./remote-text.ts";
import { firstLine, type GitResult } from "./run.ts";

/**
 * A failed remote call: `timedOut` when it ran past its deadline and was killed; `bound` when a
 * fetch of this process's was refused for what the remote answered: more than its bounds allow, or
 * an answer out of shape once its upload-pack took the request (never handed to `git fetch` then,
 * which would write what the same remote sends it before anything judges it).
 */
export type RemoteFailure = { ok: false; message: string; timedOut?: boolean; bound?: true };

/** A git call that failed, as a RemoteFailure: a deadline said as such, else git's own first line. */
export function failure(r: GitResult, what: string): RemoteFailure {
  if (r.timedOut) return { ok: false, message: `${what} was stopped at the deadline`, timedOut: true };
  return { ok: false, message: cleanRemoteText(firstLine(r.stderr)) || `${what} exited ${r.code}` };
}
