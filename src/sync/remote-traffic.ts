// What this clone asks of its sync remote: one line per push, ref listing and fetch in
// .git/handoff/traffic-<remote>.log (`<ms> <kind>`, times from the store's clock, so the scripted
// clock of tests applies). Every process of the clone appends to the same file (appends of one
// short line do not interleave), so the counts are the clone's, not one process's. The push
// budget (push-budget.ts) reads the pushes of the last minute from it; `stats` reports the rates.
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { observeRemoteCalls, type RemoteCallKind } from "../git/remote-calls.ts";
import type { Store } from "../store/store.ts";
import { appendNoFollow, ownFolder, readTextNoFollow, replaceFile } from "../git/safe-file.ts";

const KINDS: RemoteCallKind[] = ["push", "ls-remote", "fetch"];
/** Past this size the log is cut back to the last hour. */
const TRIM_BYTES = 64 * 1024;
const KEEP_MS = 60 * 60_000;

export interface TrafficEntry {
  at: number;
  kind: RemoteCallKind;
}

/** Stores by the directory their git commands run in: that is all the git layer tells the observer. */
const stores = new Map<string, Store>();

/** Counts the remote calls made for this store's clone from now on. */
export function countRemoteCalls(store: Store): void {
  stores.set(store.cwd, store);
  stores.set(store.storeCwd, store); // a separate store's calls run there
  observeRemoteCalls((cwd, remote, kind) => {
    const s = stores.get(cwd);
    if (s) recordRemoteCall(s, remote, kind);
  });
}

export function trafficPath(store: Store, remote: string): string {
  return join(store.repo.commonDir, "handoff", `traffic-${encodeURIComponent(remote)}.log`);
}

export function recordRemoteCall(store: Store, remote: string, kind: RemoteCallKind): void {
  const path = trafficPath(store, remote);
  const line = `${store.now().getTime()} ${kind}\n`;
  try {
    appendNoFollow(path, line, true);
  } catch {
    ownFolder(join(store.repo.commonDir, "handoff"));
    appendNoFollow(path, line, true);
  }
  trimIfLarge(store, path);
}

/** The calls recorded since `since` (epoch ms), oldest first. */
export function readTraffic(store: Store, remote: string, since = 0): TrafficEntry[] {
  const text = readTextNoFollow(trafficPath(store, remote));
  if (text === null) return [];
  const out: TrafficEntry[] = [];
  for (const line of text.split("\n")) {
    const sp = line.indexOf(" ");
    if (sp <= 0) continue;
    const at = Number(line.slice(0, sp));
    const kind = line.slice(sp + 1) as RemoteCallKind;
    if (Number.isFinite(at) && at >= since && KINDS.includes(kind)) out.push({ at, kind });
  }
  return out;
}

export interface TrafficFigures {
  remote: string;
  /** The window the rates are over, in minutes (the last hour, or since the first recorded call). */
  window_minutes: number;
  pushes: number;
  ls_remotes: number;
  fetches: number;
  pushes_per_minute: number;
  ls_remotes_per_minute: number;
  fetches_per_minute: number;
  /** Pushes in the last 60 s and the clone's budget for deferrable writes (push-budget.ts). */
  pushes_last_minute: number;
  max_pushes_per_minute: number;
}

/** Rates over the last hour (or since the first call, when that is more recent; at least a minute). */
export function trafficFigures(store: Store, remote: string, maxPerMinute: number): TrafficFigures {
  const now = store.now().getTime();
  const calls = readTraffic(store, remote, now - KEEP_MS);
  const first = calls.length ? calls[0]!.at : now;
  const minutes = Math.max(1, (now - first) / 60_000);
  const count = (k: RemoteCallKind) => calls.filter((c) => c.kind === k).length;
  const rate = (n: number) => Math.round((n / minutes) * 100) / 100;
  const pushes = count("push");
  const ls = count("ls-remote");
  const fetches = count("fetch");
  return {
    remote,
    window_minutes: Math.round(minutes * 100) / 100,
    pushes,
    ls_remotes: ls,
    fetches,
    pushes_per_minute: rate(pushes),
    ls_remotes_per_minute: rate(ls),
    fetches_per_minute: rate(fetches),
    pushes_last_minute: calls.filter((c) => c.kind === "push" && c.at > now - 60_000).length,
    max_pushes_per_minute: maxPerMinute,
  };
}

function trimIfLarge(store: Store, path: string): void {
  try {
    if (lstatSync(path).size < TRIM_BYTES) return;
    const now = store.now().getTime();
    const kept = (readTextNoFollow(path) ?? "")
      .split("\n")
      .filter((l) => Number(l.slice(0, l.indexOf(" "))) >= now - KEEP_MS);
    replaceFile(path, kept.length ? `${kept.join("\n")}\n` : "");
  } catch {
    /* another process trimmed it first */
  }
}

/** The figures for the clone's sync remote, or null without one. */
export async function remoteTrafficFor(store: Store): Promise<TrafficFigures | null> {
  const remote = await store.syncRemote();
  if (!remote) return null;
  const { maxPushesPerMinute } = await import("./push-budget.ts");
  return trafficFigures(store, remote, await maxPushesPerMinute(store));
}
