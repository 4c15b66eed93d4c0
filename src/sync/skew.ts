// This clone's clock against the others': the estimate the takeover grace and the clock_skew
// refusal rest on (core/clock-skew.ts). Two sources:
// - smart HTTP: the server's `Date` header (git shows it under GIT_TRACE_CURL) against this clock
//   at the request: a direct reading, to a second or so; ssh and git:// give none;
// - other agents' commits: a refresh that brings a commit it did not have at the previous
//   refresh saw it within that window, so (seen - committer time) is this clock's offset from its
//   writer's, give or take the window. Per writer the tightest sighting counts; the estimate is
//   the median over writers, so one writer's bad clock does not move it.
// The observations live in .git/handoff/clock-<remote>.json, the time of the last refresh in the
// mtime of clock-<remote>.refreshed: caches, safe to delete (the estimate is then unknown until
// the next observations).
import { lstatSync, readFileSync, rmSync } from "node:fs";
import { uniqueSuffix } from "../git/unique-name.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fail } from "../core/errors.ts";
import { skewRefusal, takeoverGrace, type ClockOffset } from "../core/clock-skew.ts";
import { git } from "../git/run.ts";
import { readTyped } from "../store/codec.ts";
import type { Store } from "../store/store.ts";
import { ownFolder, readTextNoFollow, replaceFile, touchNoFollow } from "../git/safe-file.ts";

/** Sightings wider than this say too little about the clock. */
const MAX_WINDOW_MS = 5 * 60_000;
const MAX_SIGHTINGS = 200;
/** Commits read per refresh for sightings: a few dozen writers say all there is to say. */
const MAX_PER_REFRESH = 64;
/** An HTTP reading older than this (by this clock) is taken again before a takeover. */
export const HTTP_READING_TTL_MS = 10 * 60_000;

export interface Sighting {
  agent: string;
  /** seen - committed (ms): this clock minus the writer's, plus up to `window_ms` of delay. */
  lag_ms: number;
  window_ms: number;
  seen_at: string;
}

export interface ClockFile {
  /** This clock at the last refresh, as earlier builds kept it (now the time of clock-<remote>.refreshed). */
  last_refresh_at?: string;
  http?: { offset_ms: number; uncertainty_ms: number; at: string };
  /** When the last try to read the server's clock found none (not smart HTTP, no header): not tried again for a while. */
  no_http_at?: string;
  sightings: Sighting[];
}

/** Where this clone keeps its clock observations of `remote` (the fast hook's cache is keyed by it too). */
export function clockFilePath(store: Store, remote: string): string {
  return join(store.repo.commonDir, "handoff", `clock-${remote}.json`);
}

export function readClockFile(store: Store, remote: string): ClockFile {
  try {
    const f = JSON.parse(readTextNoFollow(clockFilePath(store, remote)) ?? "null") as ClockFile;
    return { ...f, sightings: Array.isArray(f.sightings) ? f.sightings : [] };
  } catch {
    return { sightings: [] };
  }
}

function writeClockFile(store: Store, remote: string, f: ClockFile): void {
  const path = clockFilePath(store, remote);
  try {
    ownFolder(join(store.repo.commonDir, "handoff"));
    replaceFile(path, JSON.stringify(f));
  } catch {
    /* a cache: losing one observation costs nothing but precision */
  }
}

/** After a refresh: the commits it brought that were not here before, as sightings. */
export async function recordSightings(store: Store, remote: string, before: Map<string, string>, after: Map<string, string>): Promise<void> {
  const now = store.now();
  const last = lastRefreshAt(store, remote);
  markRefreshed(store, remote, now);
  const window = now.getTime() - last;
  if (!Number.isFinite(window) || window < 0 || window > MAX_WINDOW_MS) return;
  const brought: [string, string][] = [];
  for (const [ref, oid] of after) {
    if (before.get(ref) === oid) continue;
    brought.push([ref, oid]);
    if (brought.length >= MAX_PER_REFRESH) break;
  }
  // Nothing new (a running server's sync, most of the time): the file is neither read nor written.
  if (!brought.length) return;
  const f = readClockFile(store, remote);
  let seen = 0;
  for (const [ref, oid] of brought) {
    const c = await committer(store, oid, ref);
    if (!c || c.name === store.actor.agent) continue;
    f.sightings.push({ agent: c.name, lag_ms: now.getTime() - c.time * 1000, window_ms: window, seen_at: now.toISOString() });
    seen++;
  }
  if (!seen) return;
  f.sightings = f.sightings.slice(-MAX_SIGHTINGS);
  writeClockFile(store, remote, f);
}

/**
 * When this clone last refreshed from `remote`, by its own clock: the start of the next sightings'
 * window. Kept as the time of an empty stamp file (one `utimes` a refresh, where rewriting the
 * observations was a read, a parse and a rename); NaN before the first.
 */
function lastRefreshAt(store: Store, remote: string): number {
  const st = lstatSync(stampOf(store, remote), { throwIfNoEntry: false });
  if (st) return st.mtimeMs;
  // Written by an earlier build: its observations file held the time.
  const was = readClockFile(store, remote).last_refresh_at;
  return was ? Date.parse(was) : NaN;
}

function markRefreshed(store: Store, remote: string, at: Date): void {
  const stamp = stampOf(store, remote);
  try {
    touchNoFollow(stamp, at);
  } catch {
    try {
      ownFolder(join(store.repo.commonDir, "handoff"));
      touchNoFollow(stamp, at);
    } catch {
      /* the next sightings' window is only wider */
    }
  }
}

function stampOf(store: Store, remote: string): string {
  return join(store.repo.commonDir, "handoff", `clock-${remote}.refreshed`);
}

async function committer(store: Store, oid: string, ref: string): Promise<{ name: string; time: number } | null> {
  try {
    const text = (await readTyped(store.reader, oid, "commit", ref)).toString("utf8");
    const m = /^committer (.*) <[^>]*> (\d+) [+-]\d{4}$/m.exec(text.slice(0, text.indexOf("\n\n")));
    return m ? { name: m[1]!, time: Number(m[2]) } : null;
  } catch {
    return null;
  }
}

/** The estimate from sightings: the median over writers of each one's tightest sighting. */
export function offsetFromSightings(sightings: Sighting[]): ClockOffset | null {
  const best = new Map<string, Sighting>();
  for (const s of sightings) {
    const b = best.get(s.agent);
    // The least lag is the least delay: the tightest reading of this writer's clock.
    if (!b || s.lag_ms - s.window_ms / 2 < b.lag_ms - b.window_ms / 2) best.set(s.agent, s);
  }
  if (!best.size) return null;
  const mid = [...best.values()].map((s) => ({ at: s.lag_ms - s.window_ms / 2, pm: s.window_ms / 2 })).sort((a, b) => a.at - b.at);
  const m = mid[Math.floor((mid.length - 1) / 2)]!;
  return { offsetMs: Math.round(m.at), source: "commits", uncertaintyMs: Math.round(m.pm), samples: best.size };
}

/** The best estimate on file: an HTTP reading when there is one, else the sightings. */
export function offsetOf(f: ClockFile): ClockOffset | null {
  if (f.http) return { offsetMs: f.http.offset_ms, source: "http-date", uncertaintyMs: f.http.uncertainty_ms, samples: 1 };
  return offsetFromSightings(f.sightings);
}

/**
 * Reads the server's clock over smart HTTP: a listing of a single ref, its `Date` header against
 * this clock before and after; the listing is this process's own request where the remote is
 * plain (git/http-remote.ts), else `git ls-remote` with GIT_TRACE_CURL. Null for other transports
 * or when no header came back.
 */
export async function readHttpDate(store: Store, remote: string, timeoutMs: number): Promise<{ offset_ms: number; uncertainty_ms: number } | null> {
  // A remote this process talks to over HTTP itself (git/http-remote.ts): one request, its header.
  // Imported here, before the clock is read: the one-shot commands that open a store (and so this
  // file) never take a reading, and the bundles then leave the HTTP client out of their start.
  const { serverDate } = await import("../git/http-remote.ts");
  const asked = store.now().getTime();
  const sent = Date.now();
  const own = await serverDate(store.remoteSource, remote, "refs/handoff/clock-probe", timeoutMs).catch(() => null);
  if (own) return own.date === null ? null : dateReading(Date.parse(own.date), asked, Date.now() - sent);
  const url = await git(["remote", "get-url", "--", remote], { cwd: store.cwd });
  if (url.code !== 0 || !/^https?:\/\//i.test(url.stdout.trim())) return null;
  const trace = join(tmpdir(), `git-handoff-clock-${process.pid}-${uniqueSuffix()}.trace`);
  const start = store.now().getTime();
  const t0 = Date.now();
  try {
    await git(["ls-remote", remote, "refs/handoff/clock-probe"], { cwd: store.cwd, env: { GIT_TERMINAL_PROMPT: "0", GIT_TRACE_CURL: trace, GIT_TRACE_CURL_NO_DATA: "1" }, timeoutMs });
    const elapsed = Date.now() - t0;
    const dates = [...readFileSync(trace, "latin1").matchAll(/<= Recv header: Date: ([^\r\n]+)/gi)].map((m) => Date.parse(m[1]!)).filter(Number.isFinite);
    return dates.length ? dateReading(dates[0]!, start, elapsed) : null;
  } catch {
    return null;
  } finally {
    rmSync(trace, { force: true });
  }
}

/** An offset from a `Date` header read `elapsed` ms after `start` (this clock); null for a header that is no date. */
function dateReading(date: number, start: number, elapsed: number): { offset_ms: number; uncertainty_ms: number } | null {
  if (!Number.isFinite(date)) return null;
  // The header is truncated to the second: the server's time lies in [date, date + 1 s).
  const server = date + 500;
  return { offset_ms: Math.round(start + elapsed / 2 - server), uncertainty_ms: Math.round(elapsed / 2 + 500) };
}

/** Takes an HTTP reading when the one on file is missing or old; returns the estimate. */
export async function currentOffset(store: Store, remote: string, timeoutMs: number): Promise<ClockOffset | null> {
  const f = readClockFile(store, remote);
  const ageOf = (at: string | undefined) => (at ? Math.abs(store.now().getTime() - Date.parse(at)) : Infinity);
  if (!(ageOf(f.http?.at) < HTTP_READING_TTL_MS) && !(ageOf(f.no_http_at) < HTTP_READING_TTL_MS)) {
    const r = await readHttpDate(store, remote, timeoutMs);
    const fresh = readClockFile(store, remote);
    if (r) fresh.http = { ...r, at: store.now().toISOString() };
    else fresh.no_http_at = store.now().toISOString();
    writeClockFile(store, remote, fresh);
    return offsetOf(fresh);
  }
  return offsetOf(f);
}

/**
 * Before an exclusive grant through the remote: refuses with clock_skew when this clock is known
 * to be off by more than max_clock_skew; otherwise sets the takeover grace on the store.
 */
export async function guardClock(store: Store, remote: string, timeoutMs: number): Promise<void> {
  const max = store.config.maxClockSkewMs;
  const offset = await currentOffset(store, remote, timeoutMs);
  const refusal = skewRefusal(max, offset, remote);
  if (refusal) fail(refusal.code, refusal.message, refusal.data, refusal.suggestions);
  store.takeoverGraceMs = takeoverGrace(max, offset);
}

/**
 * For a write that grants nothing exclusive (a shared lease, a release, pushed later): the
 * takeover grace from the estimate on file, without a network call, so that sweeping another
 * agent's expired lease waits for clock skew too. No refusal: nothing is taken from anyone.
 */
export function graceOnFile(store: Store, remote: string): number {
  return takeoverGrace(store.config.maxClockSkewMs, offsetOf(readClockFile(store, remote)));
}
