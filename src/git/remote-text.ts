// Text from another machine (a remote's stderr, a push's reasons) made safe to show on one
// terminal line: split out of remote.ts, where a fetch's failure and a push's report both use it.

/** What the remote itself said (`remote: ...` lines on stderr), for refusals in its words. */
export function remoteLines(stderr: string): string {
  return stderr
    .split("\n")
    .filter((l) => l.startsWith("remote: "))
    .map((l) => cleanRemoteText(l.slice(8)))
    .filter(Boolean)
    .join("; ")
    .slice(0, 1000);
}

/** Text from another machine, made safe for one terminal line: no control characters. */
export function cleanRemoteText(text: string): string {
  return text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "").replace(/[\x00-\x1f\x7f]+/g, " ").trim();
}
