// A sync remote fetched from (and, over git://, listed) in process by speaking protocol v2 to its
// upload-pack over a connection of this process's own: for a folder on this disk (a path or
// file:// URL) a `git upload-pack` started here, its stdin and stdout the pipe; for a git:// URL a
// TCP connection to the remote's `git daemon`, opened with the request line git's connect.c sends
// (`git-upload-pack <path>\0host=<host>\0\0version=2\0`). Either way the server advertises its
// capabilities, takes one request (upload-pack-v2.ts builds it, the same as over HTTP), answers,
// reads the flush this side sends next as the end of the session, and closes.
// `git fetch` by path started fetch, upload-pack (and its pack-objects), index-pack or
// unpack-objects and the connectivity check's rev-list; over git:// the same less upload-pack. It
// also wrote whatever the remote's refs pointed at before anything here could judge it: a clone
// with push access could put a blob of gigabytes under refs/handoff/. Here the answer is read up
// to MAX_ANSWER and its pack within pack-read.ts's bounds, in memory, and a remote past them, or
// one whose answer is out of shape once it said it speaks protocol v2, has that fetch refused,
// with nothing written and never handed to git (sync/named-fetch.ts writes what passed).
//
// Only the plain case is taken, as path-remote.ts and http-remote.ts take theirs; anything else
// returns null and goes to git as before. By path: the plain case of path-remote.ts (a repository
// of this user's on a local file system, nothing in its configuration upload-pack or receive-pack
// acts on). Over git://: one `remote.<name>.url` of the form git://host[:port]/path (no user, no
// IPv6 literal, no `~` or `%` in the path), no uploadpack, no proxy (`core.gitProxy`,
// GIT_PROXY_COMMAND). For both: no `url.*` rewriting and no `protocol.*` setting in any scope, no
// GIT_ALLOW_PROTOCOL or GIT_PROTOCOL_FROM_USER in the environment, a SHA-1 repository, a server
// that speaks v2 and offers the command. A git:// server that cannot be reached is git's (it says
// why in its words). `HANDOFF_PATH_REMOTE=git` and `HANDOFF_DAEMON_REMOTE=git` send these to git;
// `doctor` says which way a remote goes. ssh is git's: see docs/security.md.
import type * as Net from "node:net";
import type { ConfigEntry } from "./config-scan.ts";
import { pathRemoteDir, type PathRemoteSource } from "./path-remote.ts";
import { FLUSH, pkt } from "./pkt-line.ts";
import { gitBytes } from "./run.ts";
import { ANSWER_BOUND, fetchRequest, lsRefsRequest, MAX_ANSWER, offers, outOfShape, pastBound, readAdvertisement, readFetched, readListing, type FetchAnswer, type GitsFetch } from "./upload-pack-v2.ts";

/** Where upload-pack is reached: a folder here (started as a child), or a git daemon. */
type Target = { kind: "path"; gitDir: string; name: string } | { kind: "daemon"; host: string; port: number; hostLine: string; path: string; name: string };

/** What came back on the connection, whole (the server closed it), or why not (`connected`: the request may have gone out). */
type Exchange = { ok: true; body: Buffer; failed?: string } | { ok: false; message: string; timedOut: boolean; tooLarge?: true; connected?: true };

const DEFAULT_PORT = 9418;
const daemonDisabled = () => process.env.HANDOFF_DAEMON_REMOTE === "git";

/** Settings of the environment under which git's transport differs from this one. */
const ENV = ["GIT_ALLOW_PROTOCOL", "GIT_PROTOCOL_FROM_USER"];

/**
 * The objects of `wants` the remote has beyond `haves`, in one protocol v2 fetch over a connection
 * of this process's; `gits` when the fetch is git's (not the plain case, a server that cannot be
 * reached or speaks no v2 `fetch`); a refusal (`bound`) naming the bound passed or what was out of
 * shape in the answer (never git's then: the same server could answer git with what git writes
 * before anything judges it).
 */
export async function fetchOverStream(source: PathRemoteSource, remote: string, wants: string[], haves: string[], timeoutMs: number, signal?: AbortSignal): Promise<FetchAnswer | GitsFetch> {
  const request = fetchRequest(wants, haves);
  if (!request) return { gits: "an id asked for is not a SHA-1 id" };
  const target = streamTarget(source, remote);
  if (!("kind" in target)) return { gits: target.why ?? "its URL is neither a folder here nor git://" };
  const r = await exchange(target, request, timeoutMs, signal);
  if (!r.ok) {
    if (r.tooLarge) return pastBound(target.name, ANSWER_BOUND);
    if (r.timedOut) return { ok: false, message: `${target.name} did not send the objects within ${timeoutMs} ms`, timedOut: true };
    return r.connected ? { ok: false, message: r.message, timedOut: false } : { gits: r.message };
  }
  const ad = readAdvertisement(r.body);
  if ("gits" in ad) return ad;
  if ("shape" in ad) return outOfShape(target.name, ad.shape);
  if (!offers(ad.caps, "fetch")) return { gits: "its upload-pack offers no fetch of SHA-1 objects" };
  const read = readFetched(r.body, ad.end);
  if ("bound" in read) return pastBound(target.name, read.bound);
  // Our own upload-pack that failed (the remote folder's objects cannot be sent): its words, as
  // `git fetch` prints them; the caller tells object trouble from a remote out of reach by them.
  if ("shape" in read && r.failed) return { ok: false, message: r.failed, timedOut: false };
  if ("shape" in read) return outOfShape(target.name, read.shape);
  return { ok: true, ...read };
}

/**
 * A git:// remote's refs under `prefixes` as `git ls-remote` prints them, in one ls-refs request;
 * null when the listing is git's (a folder on this disk is read from its files: path-remote.ts).
 */
export async function listOverDaemon(source: PathRemoteSource, remote: string, prefixes: string[], timeoutMs: number, signal?: AbortSignal): Promise<{ ok: true; text: string } | { ok: false; message: string; timedOut: true } | null> {
  if (prefixes.some((p) => /[\0\n\r]/.test(p))) return null;
  const target = streamTarget(source, remote);
  if (!("kind" in target) || target.kind !== "daemon") return null;
  const r = await exchange(target, lsRefsRequest(prefixes), timeoutMs, signal);
  if (!r.ok) return r.timedOut ? { ok: false, message: `${target.name} did not answer the listing within ${timeoutMs} ms`, timedOut: true } : null;
  const ad = readAdvertisement(r.body);
  if (!("caps" in ad) || !offers(ad.caps, "ls-refs")) return null;
  const text = readListing(r.body, prefixes, ad.end);
  return text === null ? null : { ok: true, text };
}

/** For `doctor`: whether fetches from `remote` are made in process, and how, or why not; null for a URL that is neither a folder here nor git://. */
export function streamRemoteStatus(source: PathRemoteSource, remote: string): { inProcess: true; kind: "path" | "daemon"; name: string } | { inProcess: false; why: string } | null {
  const t = streamTarget(source, remote);
  if ("kind" in t) return { inProcess: true, kind: t.kind, name: t.name };
  return t.why === null ? null : { inProcess: false, why: t.why };
}

/** The remote as upload-pack this process reaches itself, or why not (`why` null: its URL is neither kind). */
function streamTarget(source: PathRemoteSource, remote: string): Target | { why: string | null } {
  const mine = source.config((s, sub, key) => (s === "remote" && sub === remote) || s === "url" || s === "protocol" || (s === "core" && sub === null && key === "gitproxy"));
  if (!mine) return { why: null };
  const url = mine.find((e) => e.section === "remote" && e.key === "url")?.value ?? null;
  const daemon = url !== null && /^git:\/\//i.test(url);
  const path = daemon ? null : pathRemoteDir(source, remote);
  if (!daemon && path === null) return { why: null };
  if (path && "why" in path) return path;
  const beside = besideSettings(mine, remote, daemon);
  if (beside) return { why: beside };
  const env = ENV.find((k) => process.env[k] !== undefined) ?? (daemon ? (process.env.GIT_PROXY_COMMAND ? "GIT_PROXY_COMMAND" : undefined) : undefined);
  if (env) return { why: `${env} is set in the environment` };
  if (source.format !== "sha1") return { why: "this clone's objects are SHA-256" };
  if (path) return { kind: "path", gitDir: path.gitDir, name: path.gitDir };
  if (daemonDisabled()) return { why: "HANDOFF_DAEMON_REMOTE=git" };
  return daemonTarget(url!);
}

/** The first setting that makes git's fetch of the remote differ from this one's, or null. */
function besideSettings(entries: ConfigEntry[], remote: string, daemon: boolean): string | null {
  let urls = 0;
  for (const e of entries) {
    const name = `${e.section}.${e.subsection === null ? "" : `${e.subsection}.`}${e.key}`;
    if (e.section === "url") return `${name} (git rewrites URLs)`;
    if (e.section === "protocol") return `${name} (git's protocol settings)`;
    if (e.section === "core") {
      if (daemon) return `${name} (a proxy for git://)`;
      continue;
    }
    if (e.key === "url" && ++urls > 1) return `more than one remote.${remote}.url`;
    if (["uploadpack", "vcs", ...(daemon ? ["proxy"] : [])].includes(e.key)) return `remote.${remote}.${e.key}`;
  }
  return null;
}

/** A git:// URL as git's connect.c reads it (host and port as written, the path from its `/` on), or why not. */
function daemonTarget(url: string): Target | { why: string } {
  const m = /^git:\/\/([^/@\s[\]]+)(\/[^\s%~\\]*)$/i.exec(url);
  if (!m || /[\0-\x20\x7f]/.test(url)) return { why: "its git:// URL is not a plain host, port and path (git reads it)" };
  const hostLine = m[1]!;
  const colon = hostLine.lastIndexOf(":");
  const host = colon < 0 ? hostLine : hostLine.slice(0, colon);
  const port = colon < 0 ? DEFAULT_PORT : Number(hostLine.slice(colon + 1));
  if (!host || !Number.isInteger(port) || port <= 0 || port > 65535 || host.startsWith("-")) return { why: "its git:// URL is not a plain host, port and path (git reads it)" };
  return { kind: "daemon", host, port, hostLine, path: m[2]!, name: url.replace(/\/+$/, "") };
}

/**
 * One session with the remote's upload-pack: `request`, then a flush that ends the session, and
 * all the server sent until it closed; bounded by `timeoutMs`, `signal` and MAX_ANSWER (past
 * them the child's group is killed, the socket destroyed).
 */
async function exchange(target: Target, request: Buffer, timeoutMs: number, signal?: AbortSignal): Promise<Exchange> {
  const input = Buffer.concat([request, FLUSH]);
  if (target.kind === "daemon") return overSocket(target, Buffer.concat([pkt(`git-upload-pack ${target.path}\0host=${target.hostLine}\0\0version=2\0`), input]), timeoutMs, signal);
  // --strict: the folder named is the repository (path-remote.ts found it), not a guess from it.
  const r = await gitBytes(["upload-pack", "--strict", target.gitDir], { cwd: target.gitDir, env: { GIT_PROTOCOL: "version=2" }, input, timeoutMs, maxStdout: MAX_ANSWER, ...(signal ? { signal } : {}) });
  if (r.overflowed) return { ok: false, message: `${target.name} answered more than ${MAX_ANSWER} bytes`, timedOut: false, tooLarge: true };
  if (r.timedOut) return { ok: false, message: `${target.name} did not answer within the deadline`, timedOut: true };
  // A failed upload-pack's partial answer is read as such (it lacks its end), with its own words.
  const said = r.stderr.split("\n").find((l) => /^(fatal|error):/.test(l)) ?? r.stderr.split("\n")[0] ?? "";
  return { ok: true, body: r.stdout, ...(r.code !== 0 ? { failed: `remote: ${said.trim() || `git upload-pack exited ${r.code}`}`.slice(0, 300) } : {}) };
}

function overSocket(target: Target & { kind: "daemon" }, bytes: Buffer, timeoutMs: number, signal?: AbortSignal): Promise<Exchange> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let connected = false;
    let done = false;
    const socket = net().connect({ host: target.host, port: target.port });
    const finish = (r: Exchange) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", stop);
      socket.destroy();
      resolve(r);
    };
    const stop = () => finish({ ok: false, message: `${target.name} did not answer within the deadline`, timedOut: true });
    const timer = setTimeout(stop, Math.max(1, timeoutMs));
    if (signal?.aborted) return stop();
    signal?.addEventListener("abort", stop, { once: true });
    socket.once("connect", () => {
      connected = true;
      socket.write(bytes);
    });
    socket.on("data", (b: Buffer) => {
      size += b.length;
      if (size > MAX_ANSWER) finish({ ok: false, message: `${target.name} answered more than ${MAX_ANSWER} bytes`, timedOut: false, tooLarge: true });
      else chunks.push(b);
    });
    // The server closes once the session's flush is read: what came is the whole answer.
    socket.once("end", () => finish({ ok: true, body: Buffer.concat(chunks) }));
    socket.once("error", (e) => finish(connected ? { ok: true, body: Buffer.concat(chunks) } : { ok: false, message: `${target.name}: ${e.message}`, timedOut: false }));
  });
}

type GetBuiltin = <T>(id: string) => T;

/** node:net on first use (a one-shot command that never reaches a git daemon never loads it). */
function net(): typeof Net {
  const get = (process as unknown as { getBuiltinModule?: GetBuiltin }).getBuiltinModule;
  return get ? get<typeof Net>("node:net") : (require("node:net") as typeof Net);
}
