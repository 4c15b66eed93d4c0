// Where a remote's refs/handoff/* are mirrored in this clone, by name only (no git call): split
// out of remote.ts, since most of sync names tracking refs and only a few places fetch or push.

export const TRACKING_ROOT = "refs/handoff-remotes/";

/** Where the remote's refs/handoff/* are mirrored locally (never under refs/remotes/). */
export function trackingPrefix(remote: string): string {
  return `${TRACKING_ROOT}${remote}/`;
}

/** The tracking ref for `refs/handoff/<rest>`. */
export function trackingRef(remote: string, ref: string): string {
  return trackingPrefix(remote) + ref.slice("refs/handoff/".length);
}
