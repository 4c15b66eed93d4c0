// Talking to a sync remote: git's own transports, credentials and ssh config, through `git fetch`
// and `git push`. Results are read from exit codes and `--porcelain` lines, never from prose.
//
// The code lives in files named after what each part holds; this file only re-exports them, so
// that importers not moved to those files yet (named-fetch.ts, doctor-objects.ts, being changed
// alongside) keep working. New code imports from the files themselves:
//   tracking-ref.ts       names of the tracking refs (refs/handoff-remotes/<remote>/*)
//   fetch-refs.ts         `git fetch` of refs/handoff/* into them, its retries and haves
//   remote-listing.ts     the remote's refs listed, the parse kept, a second namespace seen
//   push-lease.ts         `git push --atomic` with a lease per ref, and its porcelain report
//   configured-remote.ts  which remote sync uses, and the settings read with it
//   fetch-lock.ts         one fetch at a time per clone and remote
//   remote-failure.ts, remote-text.ts  a failed call's shape; remote text made safe to show
export { TRACKING_ROOT, trackingPrefix, trackingRef } from "./tracking-ref.ts";
export { fetchHandoffRefs, type FetchResult } from "./fetch-refs.ts";
export { lsRemoteHandoff, namespaceSplit, type NamespaceSplit } from "./remote-listing.ts";
export { parsePorcelain, pushWithLease, type PushResult, type PushStatus, type PushUpdate } from "./push-lease.ts";
export { configuredRemote, seenSetting } from "./configured-remote.ts";
export { withFetchLock } from "./fetch-lock.ts";
export { type RemoteFailure } from "./remote-failure.ts";
export { cleanRemoteText, remoteLines } from "./remote-text.ts";
