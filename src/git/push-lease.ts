// Pushing to a sync remote with a lease per ref, and reading each ref's outcome from git's
// `--porcelain` report (or from the in-process pushes' own answers), never from prose. Split out
// of remote.ts so the push and the parse of its report read apart from fetch and listing.
import { noteRemoteCall } from "./remote-calls.ts";
import { cleanRemoteText, remoteLines } from "./remote-text.ts";
import { firstLine, git, toolIdentityEnv, type GitResult } from "./run.ts";
import { fromRemote, HANDOFF_ROOT, remotePrefix, toRemote } from "./ref-prefix.ts";
import { pushToPath, type PathRemoteSource } from "./path-remote.ts";
import { pushOverHttp } from "./http-remote.ts";
import { endPushTrace, startPushTrace } from "./push-trace.ts";

/** One ref to push: `new` null deletes; `expected` null means the remote must not have it yet. */
export interface PushUpdate {
  ref: string;
  new: string | null;
  expected: string | null;
}

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
  /**
   * The ref updates went out but no report came back: read the remote to learn what happened.
   * `reused`: over smart HTTP, on a kept connection the remote dropped (it may close one it holds
   * idle just as a request goes out on it).
   */
  | { kind: "unknown"; message: string; timedOut: boolean; reused?: true };

/**
 * Whether a push whose outcome was unknown and read back as not landed goes out once more: it
 * went out on a kept HTTP connection the remote dropped (closed as idle as the request left), and
 * has not been sent again yet. A claim's push (remote-cas.ts) and a sync's (sync.ts) both ask.
 */
export function sendAgain(push: PushResult, sentAgain: boolean): boolean {
  return push.kind === "unknown" && push.reused === true && !sentAgain;
}

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
    if (overHttp.kind !== "report") return { kind: overHttp.kind, message: cleanRemoteText(overHttp.message), timedOut: overHttp.timedOut, ...(overHttp.kind === "unknown" && overHttp.reused ? { reused: true as const } : {}) };
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
