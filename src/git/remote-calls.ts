// Who talks to a remote and how often: every push, ref listing and fetch of refs/handoff/* goes
// through src/git/fetch-refs.ts, push-lease.ts, remote-listing.ts or remote-ref.ts, which call
// `noteRemoteCall`. The sync layer registers the observer that keeps the per-clone counts
// (src/sync/remote-traffic.ts); with no observer this costs nothing.
export type RemoteCallKind = "push" | "ls-remote" | "fetch";

type Observer = (cwd: string, remote: string, kind: RemoteCallKind) => void;

let observer: Observer | null = null;

export function observeRemoteCalls(fn: Observer | null): void {
  observer = fn;
}

export function noteRemoteCall(cwd: string, remote: string, kind: RemoteCallKind): void {
  try {
    observer?.(cwd, remote, kind);
  } catch {
    /* counting must never break the call it counts */
  }
}
