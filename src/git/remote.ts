// Talking to a sync remote: git's own transports, credentials and ssh config, through `git fetch`
// and `git push`. Results are read from exit codes and `--porcelain` lines, never from prose.
import { closeSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { firstLine, git, toolIdentityEnv } from "./run.ts";

export const TRACKING_ROOT = "refs/handoff-remotes/";

/** Where the remote's refs/handoff/* are mirrored locally (never under refs/remotes/). */
export function trackingPrefix(remote: string): string {
  return `${TRACKING_ROOT}${remote}/`;
}

/** The tracking ref for `refs/handoff/<rest>`. */
export function trackingRef(remote: string, ref: string): string {
  return trackingPrefix(remote) + ref.slice("refs/handoff/".length);
}

export type FetchResult = { ok: true } | { ok: false; message: string };

/**
 * Mirrors the remote's refs/handoff/* into the tracking refs, pruning those the remote deleted.
 * The glob refspec makes git ask only for the `refs/handoff/` prefix (protocol v2 `ref-prefix`),
 * and objects already present are not transferred: with nothing new it is one advertisement.
 * The refspec is given on the command line, so `remote.<name>.fetch` is never touched.
 */
export async function fetchHandoffRefs(cwd: string, remote: string, refs?: string[]): Promise<FetchResult> {
  const specs = refs ? refs.map((r) => `+${r}:${trackingRef(remote, r)}`) : [`+refs/handoff/*:${trackingPrefix(remote)}*`];
  let r;
  for (let n = 0; ; n++) {
    r = await git(
      ["fetch", "--quiet", "--no-tags", ...(refs ? [] : ["--prune"]), "--no-write-fetch-head", "--no-auto-gc", "--no-recurse-submodules", remote, ...specs],
      { cwd, env: { GIT_TERMINAL_PROMPT: "0" } },
    );
    if (r.code === 0) return { ok: true };
    // Exit 128 is fatal (no connection, no repository). Exit 1 means the transfer worked but a
    // tracking ref could not be updated: another process of this clone was fetching it too.
    if (r.code !== 1 || n >= 8) break;
    await new Promise((res) => setTimeout(res, 20 + Math.random() * 40 * (n + 1)));
  }
  return { ok: false, message: firstLine(r.stderr) || `git fetch exited ${r.code}` };
}

/** One ref to push: `new` null deletes; `expected` null means the remote must not have it yet. */
export interface PushUpdate {
  ref: string;
  new: string | null;
  expected: string | null;
}

/**
 * The remote's refs/handoff/* and their values: one advertisement, no objects. Cheaper than a
 * fetch with nothing new (which still checks every ref), so sync asks this first.
 */
export async function lsRemoteHandoff(cwd: string, remote: string): Promise<{ ok: true; tips: Map<string, string> } | { ok: false; message: string }> {
  const r = await git(["ls-remote", remote, "refs/handoff/*"], { cwd, env: { GIT_TERMINAL_PROMPT: "0" } });
  if (r.code !== 0) return { ok: false, message: firstLine(r.stderr) || `git ls-remote exited ${r.code}` };
  const tips = new Map<string, string>();
  for (const line of r.stdout.split("\n")) {
    const tab = line.indexOf("\t");
    if (tab > 0 && line.startsWith("refs/handoff/", tab + 1)) tips.set(line.slice(tab + 1), line.slice(0, tab));
  }
  return { ok: true, tips };
}

export type PushStatus = "ok" | "rejected";

export type PushResult =
  | { kind: "done"; status: Map<string, PushStatus> }
  /** No porcelain status came back: the remote could not be reached (or refused the connection). */
  | { kind: "unreachable"; message: string };

/**
 * `git push --atomic --porcelain` with a lease per ref: every ref lands, or none does, and each
 * only if the remote still has the value we decided on.
 */
export async function pushWithLease(cwd: string, remote: string, updates: PushUpdate[], agent?: string): Promise<PushResult> {
  const args = ["push", "--atomic", "--porcelain", "--no-verify"];
  for (const u of updates) args.push(`--force-with-lease=${u.ref}:${u.expected ?? ""}`);
  args.push(remote);
  for (const u of updates) args.push(`${u.new ?? ""}:${u.ref}`);
  const r = await git(args, { cwd, env: { GIT_TERMINAL_PROMPT: "0", ...toolIdentityEnv(agent) } });
  const status = parsePorcelain(r.stdout);
  if (status.size === 0) return { kind: "unreachable", message: firstLine(r.stderr) || `git push exited ${r.code}` };
  // A ref missing from the report did not land.
  for (const u of updates) if (!status.has(u.ref)) status.set(u.ref, "rejected");
  return { kind: "done", status };
}

/**
 * Porcelain push output: `<flag>\t<from>:<to>\t<summary>` per ref, where the flag is one of
 * ` ` (fast-forward), `+` (forced), `-` (deleted), `*` (new), `=` (up to date), `!` (rejected).
 */
export function parsePorcelain(stdout: string): Map<string, PushStatus> {
  const status = new Map<string, PushStatus>();
  for (const line of stdout.split("\n")) {
    const m = /^([ +\-*=!])\t([^\t]*)\t/.exec(line);
    if (!m) continue;
    const to = m[2]!.slice(m[2]!.lastIndexOf(":") + 1);
    status.set(to, m[1] === "!" ? "rejected" : "ok");
  }
  return status;
}

/** The configured sync remote: `handoff.remote`, else `origin` when it exists; "" disables sync. */
export async function configuredRemote(
  cwd: string,
  commonDir?: string,
): Promise<{ name: string | null; explicit: boolean; url: string | null }> {
  // Every exclusive write asks this. A repository whose own config names no remote, no handoff
  // setting and no include cannot have a sync remote: answer without spawning git.
  if (commonDir && !mayConfigureRemote(commonDir)) return { name: null, explicit: false, url: null };
  const r = await git(["config", "--get-regexp", "^(handoff\\.remote|remote\\..*\\.url)$"], { cwd });
  const values = new Map<string, string>();
  for (const line of r.stdout.split("\n")) {
    const sp = line.indexOf(" ");
    if (sp > 0) values.set(line.slice(0, sp).toLowerCase(), line.slice(sp + 1));
    else if (line) values.set(line.toLowerCase(), "");
  }
  const set = values.get("handoff.remote");
  if (set !== undefined) {
    if (set === "") return { name: null, explicit: true, url: null };
    return { name: set, explicit: true, url: values.get(`remote.${set.toLowerCase()}.url`) ?? null };
  }
  const origin = values.get("remote.origin.url");
  return origin !== undefined ? { name: "origin", explicit: false, url: origin } : { name: null, explicit: false, url: null };
}

function mayConfigureRemote(commonDir: string): boolean {
  try {
    return /^\s*\[\s*(remote|handoff|include|includeif)\b/im.test(readFileSync(join(commonDir, "config"), "utf8"));
  } catch {
    return true;
  }
}

const STALE_LOCK_MS = 60_000;

/**
 * One fetch at a time per clone and remote: concurrent fetches of the same tracking refs fail on
 * git's ref locks. A process that waited while another fetched after its request began takes that
 * fetch's result instead of fetching again (its view is at least as fresh).
 */
export async function withFetchLock<T extends { ok: boolean }>(dir: string, remote: string, fetch: () => Promise<T>, coalesced: () => Promise<T>): Promise<T> {
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, `fetch-${remote}.lock`);
  const stamp = join(dir, `fetch-${remote}.done`);
  const asked = Date.now();
  for (let n = 0; ; n++) {
    let fd: number;
    try {
      fd = openSync(lock, "wx");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      try {
        if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) unlinkSync(lock); // left by a crash
      } catch {
        /* gone meanwhile */
      }
      await new Promise((r) => setTimeout(r, 5 + Math.random() * Math.min(50, 5 * (n + 1))));
      continue;
    }
    try {
      closeSync(fd);
      if (lastFetch(stamp) > asked) return await coalesced();
      const r = await fetch();
      if (r.ok) {
        const now = new Date();
        try {
          utimesSync(stamp, now, now);
        } catch {
          writeFileSync(stamp, "");
        }
      }
      return r;
    } finally {
      try {
        unlinkSync(lock);
      } catch {
        /* already broken as stale */
      }
    }
  }
}

function lastFetch(stamp: string): number {
  try {
    return statSync(stamp).mtimeMs;
  } catch {
    return 0;
  }
}
