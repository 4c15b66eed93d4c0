// Talking to a sync remote: git's own transports, credentials and ssh config, through `git fetch`
// and `git push`. Results are read from exit codes and `--porcelain` lines, never from prose.
import { lstatSync, readFileSync } from "node:fs";
import { ownFolder, touchNoFollow } from "./safe-file.ts";
import { join } from "node:path";
import { acquireOwnedLock } from "./owned-lock.ts";
import { scanRemoteSettings } from "./config-scan.ts";
import { noteRemoteCall } from "./remote-calls.ts";
import { firstLine, git, toolIdentityEnv, type GitResult } from "./run.ts";
import { fromRemote, HANDOFF_ROOT, notePrefix, remotePrefix, splitIn, splitPatterns, toRemote, type NamespaceSplit } from "./ref-prefix.ts";
export type { NamespaceSplit } from "./ref-prefix.ts";
import { pushToPath, type PathRemoteSource } from "./path-remote.ts";
import { pushOverHttp } from "./http-remote.ts";
import { listRemote } from "./remote-ref.ts";
import { endPushTrace, startPushTrace } from "./push-trace.ts";

export const TRACKING_ROOT = "refs/handoff-remotes/";

/** Where the remote's refs/handoff/* are mirrored locally (never under refs/remotes/). */
export function trackingPrefix(remote: string): string {
  return `${TRACKING_ROOT}${remote}/`;
}

/** The tracking ref for `refs/handoff/<rest>`. */
export function trackingRef(remote: string, ref: string): string {
  return trackingPrefix(remote) + ref.slice("refs/handoff/".length);
}

/**
 * A failed remote call: `timedOut` when it ran past its deadline and was killed; `bound` when a
 * fetch of this process's was refused because the remote sent more than its bounds allow (never
 * handed to `git fetch` then, which would write it all first).
 */
export type RemoteFailure = { ok: false; message: string; timedOut?: boolean; bound?: true };

export type FetchResult = { ok: true } | RemoteFailure;

function failure(r: GitResult, what: string): RemoteFailure {
  if (r.timedOut) return { ok: false, message: `${what} was stopped at the deadline`, timedOut: true };
  return { ok: false, message: cleanRemoteText(firstLine(r.stderr)) || `${what} exited ${r.code}` };
}

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

/** One ref to push: `new` null deletes; `expected` null means the remote must not have it yet. */
export interface PushUpdate {
  ref: string;
  new: string | null;
  expected: string | null;
}

/**
 * The remote's refs/handoff/* and their values: one advertisement, no objects. Cheaper than a
 * fetch with nothing new (which still checks every ref), so sync asks this first. With `refs`,
 * only those (the check after a push whose outcome is unknown).
 */
export async function lsRemoteHandoff(cwd: string, remote: string, timeoutMs: number, refs?: string[], source?: PathRemoteSource): Promise<{ ok: true; tips: Map<string, string>; raw: string; prefix: string } | RemoteFailure> {
  noteRemoteCall(cwd, remote, "ls-remote");
  const prefix = await remotePrefix(cwd, remote);
  // In process where it can be (on this disk, over HTTP), in git's own output form.
  const names = refs?.map((x) => toRemote(x, prefix));
  const r = await listRemote(cwd, remote, prefix, names ?? [`${prefix}*`, ...splitPatterns(prefix)], timeoutMs, source, names);
  if ("message" in r) return r;
  if (r.code !== 0 || r.timedOut) return failure(r, "git ls-remote");
  if (!refs) noteSplit(`${cwd}\0${remote}`, splitIn(r.stdout, prefix));
  // The same answer as the last full listing (a running process's sync with nothing new): the
  // same map, not 5,000 lines parsed again. Callers only read it.
  const key = refs ? null : `${cwd}\0${remote}\0${prefix}`;
  const last = key ? lastListing.get(key) : undefined;
  if (last && last.stdout === r.stdout) return { ok: true, tips: last.tips, raw: r.stdout, prefix };
  // Parsed when first read: a sync that finds the listing it remembers never reads it (quiet-sync.ts).
  let parsed: Map<string, string> | undefined;
  return {
    ok: true,
    get tips() {
      return (parsed ??= parseListing(r.stdout, prefix, refs, key));
    },
    raw: r.stdout,
    prefix,
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

/**
 * Per ref: `ok` landed; `stale` the lease lost (a real compare-and-swap loss, or the atomic
 * push failed because another ref's lease lost); `rejected` the remote refused it for its own
 * reasons (a hook, a protected ref, permissions); `unknown` sent, but no report came back.
 */
export type PushStatus = "ok" | "stale" | "rejected" | "unknown";

export type PushResult =
  | { kind: "done"; status: Map<string, PushStatus>; reasons: Map<string, string>; remoteMessage: string }
  /** Nothing reached the remote: no ref update was sent, so nothing can have landed. */
  | { kind: "unsent"; message: string; timedOut: boolean }
  /** The ref updates went out but no report came back: read the remote to learn what happened. */
  | { kind: "unknown"; message: string; timedOut: boolean };

/**
 * `git push --atomic --porcelain` with a lease per ref: every ref lands, or none does, and each
 * only if the remote still has the value we decided on. git's packet trace says whether the ref
 * updates were sent, which is what separates "cannot have landed" from "may have landed".
 */
export async function pushWithLease(cwd: string, remote: string, updates: PushUpdate[], timeoutMs: number, agent?: string, source?: PathRemoteSource): Promise<PushResult> {
  const prefix = await remotePrefix(cwd, remote);
  // A remote on this machine's disk is written in process, as receive-pack would (path-remote.ts).
  const inProcess = source ? await pushToPath(source, remote, updates.map((u) => ({ ref: toRemote(u.ref, prefix), new: u.new, expected: u.expected }))).catch(() => null) : null;
  if (inProcess) {
    noteRemoteCall(cwd, remote, "push");
    // A stale lock at the remote is no race: said as the remote's refusal, with what to do.
    const failed: PushStatus = !inProcess.ok && inProcess.stuck ? "rejected" : "stale";
    const status = new Map<string, PushStatus>(updates.map((u) => [u.ref, inProcess.ok ? "ok" : failed]));
    const reasons = new Map<string, string>(inProcess.ok ? [] : updates.map((u) => [u.ref, inProcess.stuck ?? inProcess.message]));
    return { kind: "done", status, reasons, remoteMessage: "" };
  }
  // Over smart HTTP: one request of this process's (http-remote.ts).
  const started = Date.now();
  const overHttp = !inProcess && source ? await pushOverHttp(source, remote, updates.map((u) => ({ ref: toRemote(u.ref, prefix), new: u.new, expected: u.expected })), timeoutMs).catch(() => null) : null;
  if (overHttp) {
    noteRemoteCall(cwd, remote, "push");
    if (overHttp.kind !== "report") return { kind: overHttp.kind, message: cleanRemoteText(overHttp.message), timedOut: overHttp.timedOut };
    const status = new Map<string, PushStatus>();
    const reasons = new Map<string, string>();
    for (const u of updates) {
      const s = overHttp.refs.get(toRemote(u.ref, prefix))!;
      if (s.ok) status.set(u.ref, "ok");
      else {
        reasons.set(u.ref, cleanRemoteText(s.reason));
        status.set(u.ref, RACE_REASON.test(s.reason) ? "stale" : "rejected");
      }
    }
    return { kind: "done", status, reasons, remoteMessage: remoteLines(overHttp.remoteText) };
  }
  timeoutMs = Math.max(1, timeoutMs - (Date.now() - started));
  const args = ["push", "--atomic", "--porcelain", "--no-verify"];
  for (const u of updates) args.push(`--force-with-lease=${toRemote(u.ref, prefix)}:${u.expected ?? ""}`);
  args.push(remote);
  for (const u of updates) args.push(`${u.new ?? ""}:${toRemote(u.ref, prefix)}`);
  const trace = startPushTrace();
  let r: GitResult;
  let sent = true;
  noteRemoteCall(cwd, remote, "push");
  try {
    r = await git(args, { cwd, env: { GIT_TERMINAL_PROMPT: "0", ...(trace ? { GIT_TRACE_PACKET: trace } : {}), ...toolIdentityEnv(agent) }, timeoutMs });
  } finally {
    sent = endPushTrace(trace);
  }
  const { status, reasons } = parsePorcelain(r.stdout, prefix);
  const message = cleanRemoteText(firstLine(r.stderr.split("\n").filter((l) => !l.startsWith("remote:")).join("\n"))) || `git push exited ${r.code}`;
  if (status.size === 0 || r.timedOut) {
    if (status.size && [...status.values()].every((s) => s === "ok")) return { kind: "done", status, reasons, remoteMessage: "" };
    return { kind: sent ? "unknown" : "unsent", message: r.timedOut ? "git push was stopped at the deadline" : message, timedOut: !!r.timedOut };
  }
  // A ref missing from the report did not land (an atomic push reports every ref it sent).
  for (const u of updates) if (!status.has(u.ref)) status.set(u.ref, [...status.values()].includes("unknown") ? "unknown" : "stale");
  return { kind: "done", status, reasons, remoteMessage: remoteLines(r.stderr) };
}

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

/** Reasons git gives when the remote's own compare-and-swap lost to a concurrent push. */
const RACE_REASON = /stale info|atomic push fail|fetch first|non-fast-forward|failed to (update|lock)|cannot lock|incorrect old value|already exists|atomic transaction failed/i;

/**
 * Porcelain push output: `<flag>\t<from>:<to>\t<summary>` per ref, where the flag is one of
 * ` ` (fast-forward), `+` (forced), `-` (deleted), `*` (new), `=` (up to date), `!` (rejected);
 * a rejection's summary is `[rejected] (reason)`, `[remote rejected] (reason)` or
 * `[remote failure] (...)` (the connection ended before the remote reported).
 */
export function parsePorcelain(stdout: string, prefix = HANDOFF_ROOT): { status: Map<string, PushStatus>; reasons: Map<string, string> } {
  const status = new Map<string, PushStatus>();
  const reasons = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const m = /^([ +\-*=!])\t([^\t]*)\t(.*)$/.exec(line);
    if (!m) continue;
    const named = m[2]!.slice(m[2]!.lastIndexOf(":") + 1);
    const to = fromRemote(named, prefix) ?? named;
    if (m[1] !== "!") {
      status.set(to, "ok");
      continue;
    }
    const summary = m[3]!;
    const reason = /\((.*)\)\s*$/.exec(summary)?.[1] ?? summary;
    reasons.set(to, cleanRemoteText(reason));
    status.set(to, /\[remote failure\]/.test(summary) ? "unknown" : RACE_REASON.test(reason) ? "stale" : "rejected");
  }
  return { status, reasons };
}

/** The configured sync remote: `handoff.remote`, else `origin` when it exists; "" disables sync. */
export async function configuredRemote(
  cwd: string,
  commonDir?: string,
): Promise<{ name: string | null; explicit: boolean; url: string | null }> {
  // Every exclusive write asks this. A repository whose own config names no remote, no handoff
  // setting and no include cannot have a sync remote: answer without spawning git.
  if (commonDir && !mayConfigureRemote(commonDir)) return { name: null, explicit: false, url: null };
  // Read from git's files when they are plain (config-scan.ts): `wait`, `sync` and a remote claim
  // otherwise start a `git config` before anything else.
  const stdout =
    (commonDir ? scanRemoteSettings(process.env, commonDir) : null) ??
    (await git(["config", "--get-regexp", "^(handoff\\.remote|handoff\\.remotetimeout|handoff\\.machine|remote\\..*\\.(url|handoffrefprefix))$"], { cwd })).stdout;
  const values = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const sp = line.indexOf(" ");
    if (sp > 0) values.set(line.slice(0, sp).toLowerCase(), line.slice(sp + 1));
    else if (line) values.set(line.toLowerCase(), "");
  }
  // Each remote's handoff ref prefix came with the same read: no second git call for it.
  const prefixes = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const m = /^remote\.(.+)\.(url|handoffrefprefix) ?(.*)$/i.exec(line);
    if (m && (m[2]!.toLowerCase() === "handoffrefprefix" || !prefixes.has(m[1]!))) prefixes.set(m[1]!, m[2]!.toLowerCase() === "handoffrefprefix" ? m[3]! : "");
  }
  for (const [name, prefix] of prefixes) notePrefix(cwd, name, prefix);
  // Settings every remote operation needs next came with the same read: no git call of their own.
  seenSettings.set(cwd, new Map(SEEN_KEYS.map((k) => [k, values.get(k) ?? null])));
  const set = values.get("handoff.remote");
  if (set !== undefined) {
    if (set === "") return { name: null, explicit: true, url: null };
    return { name: set, explicit: true, url: values.get(`remote.${set.toLowerCase()}.url`) ?? null };
  }
  const origin = values.get("remote.origin.url");
  return origin !== undefined ? { name: "origin", explicit: false, url: origin } : { name: null, explicit: false, url: null };
}

const SEEN_KEYS = ["handoff.remotetimeout", "handoff.machine"] as const;
const seenSettings = new Map<string, Map<string, string | null>>();

/** `git config <key>` as configuredRemote last read it for `cwd` (null: unset; undefined: not read). */
export function seenSetting(cwd: string, key: (typeof SEEN_KEYS)[number]): string | null | undefined {
  return seenSettings.get(cwd)?.get(key);
}

function mayConfigureRemote(commonDir: string): boolean {
  try {
    return /^\s*\[\s*(remote|handoff|include|includeif)\b/im.test(readFileSync(join(commonDir, "config"), "utf8"));
  } catch {
    return true;
  }
}

/**
 * One fetch at a time per clone and remote: concurrent fetches of the same tracking refs fail on
 * git's ref locks. A process that waited while another fetched after its request began takes that
 * fetch's result instead of fetching again (its view is at least as fresh). The lock names its
 * holder: one left by a process that is gone is broken at once; a live holder is waited on until
 * `until`, then the wait fails as a timeout.
 */
export async function withFetchLock<T extends { ok: boolean }>(
  dir: string,
  remote: string,
  until: number,
  fetch: () => Promise<T>,
  coalesced: () => Promise<T>,
  onWait?: (message: string) => void,
): Promise<T | RemoteFailure> {
  ownFolder(dir);
  const lock = join(dir, `fetch-${remote}.lock`);
  const stamp = join(dir, `fetch-${remote}.done`);
  const asked = Date.now();
  const got = await acquireOwnedLock(lock, until, onWait);
  if (!got.ok) {
    const who = got.owner ? `process ${got.owner.pid} on ${got.owner.host}` : "another process";
    return { ok: false, timedOut: true, message: `${who} held ${lock} for ${Math.round(got.waitedMs / 1000)} s` };
  }
  try {
    if (lastFetch(stamp) > asked) return await coalesced();
    const r = await fetch();
    if (r.ok) {
      touchNoFollow(stamp, new Date());
    }
    return r;
  } finally {
    got.release();
  }
}

function lastFetch(stamp: string): number {
  try {
    return lstatSync(stamp).mtimeMs;
  } catch {
    return 0;
  }
}
