// Following one ref on a sync remote: `git ls-remote <remote> <ref>` asks for exactly that ref
// (protocol v2 `ref-prefix`), so a waiter's poll costs one small advertisement however many refs
// the remote holds.
import { noteRemoteCall } from "./remote-calls.ts";
import { firstLine, git, type GitResult } from "./run.ts";
import { fromRemote, remotePrefix, toRemote } from "./ref-prefix.ts";
import { listOverHttp } from "./http-remote.ts";
import { listPath, type PathRemoteSource, type StampedListing } from "./path-remote.ts";
import { listOverDaemon } from "./stream-remote.ts";

export type RemoteRefValue = { ok: true; oid: string | null } | { ok: false; message: string };

export async function lsRemoteRef(cwd: string, remote: string, ref: string, timeoutMs: number): Promise<RemoteRefValue> {
  const r = await lsRemoteRefs(cwd, remote, [ref], timeoutMs);
  return r.ok ? { ok: true, oid: r.tips.get(ref) ?? null } : r;
}

type Listing = { ok: true; tips: Map<string, string> } | { ok: false; message: string; timedOut?: boolean };

/** Several exact refs in one advertisement; a ref the remote lacks is absent from `tips`. `signal` ends it early. */
export function lsRemoteRefs(cwd: string, remote: string, refs: string[], timeoutMs: number, source?: PathRemoteSource, signal?: AbortSignal): Promise<Listing> {
  // A pattern also matches longer names ending in it: keep only the refs asked for.
  return lsRemoteMapped(cwd, remote, (prefix) => refs.map((x) => toRemote(x, prefix)), (ref) => refs.includes(ref), timeoutMs, source, signal);
}

/** Every ref of the remote under `prefix` (e.g. refs/handoff/tasks/) in one advertisement. */
export function lsRemotePrefix(cwd: string, remote: string, prefix: string, timeoutMs: number): Promise<Listing> {
  return lsRemoteFamilies(cwd, remote, [prefix], timeoutMs);
}

/** Whether `ref` is one of `families`: a name ending in `/` holds every ref under it, any other names one ref. */
export function inFamilies(ref: string, families: string[]): boolean {
  return families.some((f) => (f.endsWith("/") ? ref.startsWith(f) : ref === f));
}

/** The refs of several families (see inFamilies) in one advertisement. */
export function lsRemoteFamilies(cwd: string, remote: string, families: string[], timeoutMs: number, source?: PathRemoteSource): Promise<Listing> {
  return lsRemoteMapped(cwd, remote, (mapped) => families.map((f) => (f.endsWith("/") ? `${toRemote(f, mapped)}*` : toRemote(f, mapped))), (ref) => inFamilies(ref, families), timeoutMs, source);
}

/**
 * `git ls-remote <remote> <patterns>` (the remote's names; a pattern ending in `*` takes every name
 * under it), or the same text read in process: from a remote on this machine's disk
 * (path-remote.ts: all of `prefix`, or only `names`), or in one ls-refs request over HTTP
 * (http-remote.ts) or git:// (stream-remote.ts), with the patterns as prefixes. A request of this process's that ran past the
 * deadline is a failure in its own words (no git ran); the time it took comes off git's. `signal`
 * aborted ends the request or git as the deadline would. A whole listing read from the disk
 * carries its `stamp`, and `known` may answer it (path-remote.ts listPath).
 */
export async function listRemote(
  cwd: string,
  remote: string,
  prefix: string,
  patterns: string[],
  timeoutMs: number,
  source?: PathRemoteSource,
  names?: string[],
  signal?: AbortSignal,
  known?: StampedListing,
): Promise<(GitResult & { stamp?: string }) | { ok: false; message: string; timedOut: true }> {
  // Patterns outside `prefix` (a full listing's look at the other namespace): exact names, or folders.
  const also = names ? [] : patterns.filter((p) => !p.startsWith(prefix)).map((p) => p.replace(/\*$/, ""));
  const read = source ? listPath(source, remote, prefix, names, also, known) : null;
  if (typeof read === "string") return { code: 0, stdout: read, stderr: "" };
  if (read !== null) return { code: 0, stdout: read.text, stderr: "", stamp: read.stamp };
  const started = Date.now();
  const prefixes = patterns.map((p) => p.replace(/\*$/, ""));
  const inProcess = source ? ((await listOverHttp(source, remote, prefixes, timeoutMs, signal).catch(() => null)) ?? (await listOverDaemon(source, remote, prefixes, timeoutMs, signal).catch(() => null))) : null;
  if (inProcess) return inProcess.ok ? { code: 0, stdout: inProcess.text, stderr: "" } : { ok: false, message: inProcess.message, timedOut: true };
  return git(["ls-remote", "--end-of-options", remote, ...patterns], { cwd, env: { GIT_TERMINAL_PROMPT: "0" }, timeoutMs: Math.max(1, timeoutMs - (Date.now() - started)), ...(signal ? { signal } : {}) });
}

/**
 * One counted, bounded `git ls-remote` of `patterns` (given the remote's name for refs/handoff/),
 * its answer named as refs/handoff/* again and filtered by `keep`. A remote on this machine's disk
 * is read in process (path-remote.ts): all of refs/handoff/ there, then the same filter.
 */
async function lsRemoteMapped(cwd: string, remote: string, patterns: (prefix: string) => string[], keep: (ref: string) => boolean, timeoutMs: number, source?: PathRemoteSource, signal?: AbortSignal): Promise<Listing> {
  noteRemoteCall(cwd, remote, "ls-remote");
  const prefix = await remotePrefix(cwd, remote);
  const r = await listRemote(cwd, remote, prefix, patterns(prefix), timeoutMs, source, undefined, signal);
  if ("message" in r) return r;
  if (r.timedOut) return { ok: false, message: `git ls-remote did not answer within ${timeoutMs} ms`, timedOut: true };
  if (r.code !== 0) return { ok: false, message: firstLine(r.stderr) || `git ls-remote exited ${r.code}` };
  const tips = new Map<string, string>();
  for (const line of r.stdout.split("\n")) {
    const tab = line.indexOf("\t");
    const ref = tab > 0 ? fromRemote(line.slice(tab + 1), prefix) : null;
    if (ref && keep(ref)) tips.set(ref, line.slice(0, tab));
  }
  return { ok: true, tips };
}
