// A sync remote over smart HTTP (`http://`), pushed to, listed and fetched from in process.
// `git push` over HTTP is four processes on this side (push, remote-http, send-pack,
// pack-objects) and two requests (the ref advertisement, then the push): a one-shot claim through
// such a remote spent ~150 ms in it on a 2-core machine, where the one request that carries the
// push takes ~70. What is done here is what send-pack does for a push of a few new objects, in
// one request:
//   POST <url>/git-receive-pack: the ref updates (old value, new value, name: the remote's own
//   compare-and-swap, under `atomic`, every ref or none), then a pack of the objects the remote
//   may lack (push-objects.ts, pack-stream.ts); the answer is receive-pack's status report on
//   side band 1 and its messages (hooks', refusals') on band 2.
// and, for listings, one protocol v2 `ls-refs` request (POST <url>/git-upload-pack) with the
// prefixes asked for, in `git ls-remote`'s output form; for fetches of listed commits, one v2
// `fetch` request whose pack is read and checked by pack-read.ts (sync/http-fetch.ts writes it).
// The advertisement send-pack reads first is read once an hour per URL (kept in
// .git/handoff/http-remotes.json): that the remote takes pushes from us without credentials and
// speaks report-status, side-band-64k and atomic. A remote that asks for credentials, redirects,
// or lacks any of those is git's for that hour.
//
// Only the plain case is taken, as path-remote.ts does for a folder; anything else returns null
// and goes to `git push` / `git ls-remote` as before: an `http://` URL without user or password,
// one `remote.<name>.url`, no pushurl, receivepack, uploadpack, proxy for it; no `url.*` rewriting,
// no `protocol.*` setting and no `http.*` one (but those for https:// URLs) in any scope (proxies,
// headers, cookies, versions are git's); no proxy in the environment (`http_proxy`, `all_proxy`);
// no push.pushOption; a SHA-1 repository. `https://` is git's (its certificates, credential
// helpers and TLS settings). A request that cannot connect goes to git, which says why in its
// words; one that was sent and not answered is an unknown outcome, which the caller reads back
// from the remote (remote-cas.ts), as it does for `git push`. `HANDOFF_HTTP_REMOTE=git` sends
// everything to git (benchmarks compare both); `doctor` says which way a remote goes, and why.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type * as Http from "node:http";
import { join } from "node:path";
import type { ConfigEntry } from "./config-scan.ts";
import type { GitObject } from "./object-reader.ts";
import { readPack } from "./pack-read.ts";
import { packOf } from "./pack-stream.ts";
import { missingObjects, type ObjectSource } from "./push-objects.ts";
import { uniqueSuffix } from "./unique-name.ts";

type Wanted = (section: string, subsection: string | null, key: string) => boolean;

export interface HttpRemoteSource extends ObjectSource {
  /** This clone's git configuration (all scopes) as config-scan.ts reads it, or null when git must be asked. */
  config(want: Wanted): ConfigEntry[] | null;
  /** Where what was learnt of a remote is kept (.git/handoff), or undefined: asked by every process. */
  stateDir?: string;
}

/** What receive-pack reported: each ref's `ok` or refusal, and what the remote said on the way. */
export type HttpPushResult =
  | { kind: "report"; refs: Map<string, { ok: true } | { ok: false; reason: string }>; remoteText: string }
  /** Nothing was sent (the deadline passed first). */
  | { kind: "unsent"; message: string; timedOut: boolean }
  /** The updates went out and no full report came back: read the remote to learn what happened. */
  | { kind: "unknown"; message: string; timedOut: boolean };

export type HttpListing = { ok: true; text: string } | { ok: false; message: string; timedOut: boolean };

const ZERO = "0".repeat(40);
/** A capability check of a URL is trusted this long. */
const CHECK_MS = 60 * 60 * 1000;
/** The largest answer read (a listing of 10,000 tasks is ~700 KB). */
const MAX_ANSWER = 32 * 1024 * 1024;
/** Statuses that say the request was refused before receive-pack or upload-pack ran. */
const REFUSED_BEFORE = new Set([301, 302, 303, 307, 308, 401, 403, 404, 405, 407, 410]);
const AGENT = "git-handoff";

const disabled = () => process.env.HANDOFF_HTTP_REMOTE === "git";

interface Target {
  url: string;
  host: string;
  port: number;
  /** The URL's path without trailing slashes. */
  base: string;
}

/**
 * Pushes `updates` (remote ref names; `expected` null: the ref must not exist there) to `remote`
 * in one request, or returns null when this push is git's (see the head of the file).
 */
export async function pushOverHttp(source: HttpRemoteSource, remote: string, updates: { ref: string; new: string | null; expected: string | null }[], timeoutMs: number): Promise<HttpPushResult | null> {
  if (updates.length === 0 || updates.some((u) => u.new === null || !PLAIN_REF.test(u.ref))) return null;
  const target = plainTarget(source, remote);
  if (!target) return null;
  const until = Date.now() + timeoutMs;
  const checked = await takesPushes(source, target, until);
  if (checked !== true) return checked === false ? null : { kind: "unsent", message: checked.message, timedOut: true };
  const objects = await missingObjects(source, updates as { ref: string; new: string; expected: string | null }[]);
  if (!objects) return null;
  const commands = updates.map((u, i) => pkt(`${u.expected ?? ZERO} ${u.new} ${u.ref}${i === 0 ? `\0report-status side-band-64k atomic object-format=sha1 agent=${AGENT}` : ""}`));
  const body = Buffer.concat([...commands, FLUSH, packOf(objects.values())]);
  const r = await request(target, "POST", `${target.base}/git-receive-pack`, { "Content-Type": "application/x-git-receive-pack-request", Accept: "application/x-git-receive-pack-result" }, body, until);
  if (!r.ok) {
    if (r.connected) return { kind: "unknown", message: r.message, timedOut: r.timedOut };
    return r.timedOut ? { kind: "unsent", message: r.message, timedOut: true } : null;
  }
  if (r.status !== 200 || r.type !== "application/x-git-receive-pack-result") {
    if (!REFUSED_BEFORE.has(r.status)) return { kind: "unknown", message: `${target.url} answered the push with HTTP ${r.status}`, timedOut: false };
    // Refused before receive-pack ran (credentials now asked for, say): git's for the hour.
    remember(source, target, `HTTP ${r.status} to a push`);
    return null;
  }
  const report = readReport(r.body);
  if (!report) return { kind: "unknown", message: `${target.url} ended its answer before the push's report`, timedOut: false };
  // A pack receive-pack could not take, or one that leaves the new tips incomplete, lands nothing
  // (atomic): git's own push sends what it would have.
  if (report.unpack !== "ok" || [...report.refs.values()].some((s) => !s.ok && /missing necessary objects|unpacker error|unpack/i.test(s.reason))) return null;
  if (updates.some((u) => !report.refs.has(u.ref))) return { kind: "unknown", message: `${target.url} reported on some of the refs only`, timedOut: false };
  return { kind: "report", refs: report.refs, remoteText: report.said };
}

/**
 * The remote's refs under `prefixes` (remote names; a full name is its own prefix) as `git
 * ls-remote` prints them (`<oid>\t<name>` lines in name order), or null when the listing is git's.
 */
export async function listOverHttp(source: HttpRemoteSource, remote: string, prefixes: string[], timeoutMs: number): Promise<HttpListing | null> {
  if (prefixes.some((p) => /[\0\n\r]/.test(p))) return null;
  const target = plainTarget(source, remote);
  if (!target) return null;
  const r = await uploadPack(target, lsRefsBody(prefixes), Date.now() + timeoutMs);
  if (!r.ok) return r.timedOut ? { ok: false, message: `${target.url} did not answer the listing within ${timeoutMs} ms`, timedOut: true } : null;
  if (r.status !== 200 || r.type !== "application/x-git-upload-pack-result") return null;
  let text = "";
  let ended = false;
  for (const p of pktLines(r.body)) {
    if (p === null) return null; // not pkt-lines: git says what the remote is
    if (p === FLUSH_MARK) {
      ended = true;
      break;
    }
    if (p === DELIM_MARK) return null;
    const m = /^([0-9a-f]{40}) (refs\/[^\x00-\x20\x7f]+)\n?$/.exec(p.toString("latin1"));
    if (!m || !prefixes.some((x) => m[2]!.startsWith(x))) return null; // an ERR, or not an answer to what was asked
    text += `${m[1]}\t${m[2]}\n`;
  }
  return ended ? { ok: true, text } : null;
}

/**
 * The `Date` header of the remote's answer to a listing of one ref (what clock-skew readings take
 * from `git ls-remote` with GIT_TRACE_CURL): `{ date: null }` when it sent none, null when the
 * remote is git's to ask (then so is this).
 */
export async function serverDate(source: HttpRemoteSource, remote: string, ref: string, timeoutMs: number): Promise<{ date: string | null } | null> {
  const target = plainTarget(source, remote);
  if (!target) return null;
  const r = await uploadPack(target, lsRefsBody([ref]), Date.now() + timeoutMs);
  if (!r.ok || r.status !== 200) return null;
  return { date: r.date };
}

function lsRefsBody(prefixes: string[]): Buffer {
  return Buffer.concat([pkt("command=ls-refs\n"), pkt("object-format=sha1\n"), DELIM, ...[...new Set(prefixes)].map((p) => pkt(`ref-prefix ${p}\n`)), FLUSH]);
}

export type HttpFetch = { ok: true; objects: Map<string, GitObject> } | { ok: false; message: string; timedOut: boolean };

/**
 * The objects of `wants` (commit ids the remote listed) that the remote has beyond `haves`, in one
 * protocol v2 `fetch` request, read and checked here (pack-read.ts); null when the fetch is git's
 * (not the plain case, a refusal, an answer out of shape, a pack past the bounds).
 */
export async function fetchOverHttp(source: HttpRemoteSource, remote: string, wants: string[], haves: string[], timeoutMs: number): Promise<HttpFetch | null> {
  if (!wants.length || ![...wants, ...haves].every((o) => /^[0-9a-f]{40}$/.test(o))) return null;
  const target = plainTarget(source, remote);
  if (!target) return null;
  const body = Buffer.concat([
    pkt("command=fetch\n"),
    pkt("object-format=sha1\n"),
    DELIM,
    pkt("ofs-delta\n"),
    pkt("no-progress\n"),
    ...[...new Set(wants)].map((w) => pkt(`want ${w}\n`)),
    ...[...new Set(haves)].map((h) => pkt(`have ${h}\n`)),
    pkt("done\n"),
    FLUSH,
  ]);
  const r = await uploadPack(target, body, Date.now() + timeoutMs);
  if (!r.ok) return r.timedOut ? { ok: false, message: `${target.url} did not send the objects within ${timeoutMs} ms`, timedOut: true } : null;
  if (r.status !== 200 || r.type !== "application/x-git-upload-pack-result") return null;
  // With `done`, the answer is the packfile section alone: "packfile", then side band 1 holds the pack.
  const parts: Buffer[] = [];
  let section: string | null = null;
  let ended = false;
  for (const p of pktLines(r.body)) {
    if (p === null || p === DELIM_MARK) return null;
    if (p === FLUSH_MARK) {
      ended = true;
      break;
    }
    if (section === null) {
      section = p.toString("latin1").replace(/\n$/, "");
      if (section !== "packfile") return null; // an ERR, shallow-info, acknowledgments: git's to handle
      continue;
    }
    if (p[0] === 1) parts.push(p.subarray(1));
    else if (p[0] === 3) return null; // the remote's own error: git says it in its words
  }
  if (!ended || section !== "packfile") return null;
  const objects = readPack(Buffer.concat(parts));
  return objects ? { ok: true, objects } : null;
}

/** For `doctor`: whether pushes to and listings of `remote` are done in process, and if not, why; null when its URL is not http(s). */
export function httpRemoteStatus(source: HttpRemoteSource, remote: string): { inProcess: true; url: string } | { inProcess: false; why: string } | null {
  const r = inspect(source, remote);
  if ("base" in r) return disabled() ? { inProcess: false, why: "HANDOFF_HTTP_REMOTE=git" } : source.format !== "sha1" ? { inProcess: false, why: "this clone's objects are SHA-256" } : { inProcess: true, url: r.url };
  return r.http ? { inProcess: false, why: r.why } : null;
}

/** The remote as a URL this process sends its own requests to, or null when they are git's. */
function plainTarget(source: HttpRemoteSource, remote: string): Target | null {
  if (disabled() || source.format !== "sha1") return null;
  const target = inspect(source, remote);
  return "base" in target ? target : null;
}

/** One protocol v2 request to upload-pack (ls-refs, fetch). */
function uploadPack(target: Target, body: Buffer, until: number): Promise<Answer> {
  return request(target, "POST", `${target.base}/git-upload-pack`, { "Content-Type": "application/x-git-upload-pack-request", Accept: "application/x-git-upload-pack-result", "Git-Protocol": "version=2" }, body, until);
}

/** A ref name of plain components only, as path-remote.ts takes them. */
const PLAIN_REF = /^refs(\/[A-Za-z0-9_@+=-][A-Za-z0-9._@+=-]*)+$/;

/** The remote as a URL this process may use, or why not (`http`: its URL is http(s) at all). */
function inspect(source: HttpRemoteSource, remote: string): Target | { why: string; http: boolean } {
  const mine = source.config((s, sub) => (s === "remote" && sub === remote) || s === "url" || s === "push" || s === "http" || s === "protocol");
  if (!mine) return { why: "this clone's git configuration is more than plain files say (an include, or git -c)", http: false };
  let url: string | null = null;
  const beside: string[] = [];
  for (const e of mine) {
    const name = `${e.section}.${e.subsection === null ? "" : `${e.subsection}.`}${e.key}`;
    if (e.section === "url") beside.push(`${name} (git rewrites URLs)`);
    else if (e.section === "push") {
      if (e.key === "pushoption") beside.push(`${name} (git asks the remote whether it takes them)`);
    } else if (e.section === "protocol" || (e.section === "http" && !e.subsection?.toLowerCase().startsWith("https://"))) beside.push(`${name} (git's ${e.section} settings)`);
    else if (e.key === "url") {
      if (url !== null || e.value === null) beside.push(`more than one remote.${remote}.url`);
      url = e.value;
    } else if (["pushurl", "receivepack", "uploadpack", "vcs", "proxy", "proxyauthmethod"].includes(e.key)) beside.push(`remote.${remote}.${e.key}`);
  }
  if (url === null || !/^https?:\/\//i.test(url)) return { why: "its URL is not http", http: false };
  const no = (why: string) => ({ why, http: true });
  if (/^https:/i.test(url)) return no("its URL is https:// (git's certificates, credential helpers and TLS settings)");
  if (beside.length) return no(beside[0]!);
  // curl's proxies for http:// (it takes HTTP_PROXY in lower case only); GIT_SSL_* is for https://.
  const proxy = ["http_proxy", "all_proxy", "ALL_PROXY", "GIT_HTTP_PROXY_AUTHMETHOD"].find((k) => process.env[k]);
  if (proxy) return no(`${proxy} is set in the environment`);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return no("git reads its URL, not this process");
  }
  if (u.username || u.password) return no("its URL holds credentials");
  if (u.search || u.hash || /[\s\0]/.test(url)) return no("its URL has a query or a fragment");
  const host = u.hostname.replace(/^\[(.*)\]$/, "$1");
  if (!host) return no("its URL names no host");
  return { url: `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, "")}`, host, port: u.port ? Number(u.port) : 80, base: u.pathname.replace(/\/+$/, "") };
}

/**
 * Whether the remote takes our pushes in one request (true), is git's (false), or did not answer
 * in time. Read from its receive-pack advertisement, kept for an hour per URL.
 */
async function takesPushes(source: HttpRemoteSource, target: Target, until: number): Promise<boolean | { message: string }> {
  const now = Date.now();
  const seen = readMemo(memoFile(source))[target.url];
  if (seen && seen.at <= now && now - seen.at < CHECK_MS) return seen.ok;
  const r = await request(target, "GET", `${target.base}/info/refs?service=git-receive-pack`, { Accept: "*/*" }, null, until);
  if (!r.ok) return r.timedOut ? { message: `${target.url} did not answer within the push's deadline` } : false;
  const why = r.status !== 200 ? `HTTP ${r.status}` : r.type !== "application/x-git-receive-pack-advertisement" ? `a ${r.type || "typeless"} answer` : lacking(r.body);
  remember(source, target, why);
  return !why;
}

/** Keeps what was learnt of the URL (`why` null: it takes pushes in one request) for the next hour's pushes. */
function remember(source: HttpRemoteSource, target: Target, why: string | null): void {
  const file = memoFile(source);
  const memo = readMemo(file);
  memo[target.url] = why ? { at: Date.now(), ok: false, why } : { at: Date.now(), ok: true };
  writeMemo(file, memo);
}

/** What a receive-pack advertisement lacks for a push in one request, or null. */
function lacking(body: Buffer): string | null {
  // "# service=git-receive-pack", a flush, then the first ref (or "capabilities^{}") with the capabilities after a NUL.
  const lines: ReturnType<typeof pktLines> extends Generator<infer T> ? T[] : never = [];
  for (const p of pktLines(body)) if (lines.push(p) >= 3) break;
  const first = lines[0] === FLUSH_MARK ? lines[1] : lines[2];
  if (!first || first === FLUSH_MARK || first === DELIM_MARK) return "no advertisement";
  const text = first.toString("latin1");
  const nul = text.indexOf("\0");
  if (nul < 0) return "no capabilities";
  const caps = new Set(text.slice(nul + 1).trim().split(" "));
  for (const need of ["report-status", "side-band-64k", "atomic"]) if (!caps.has(need)) return `no ${need}`;
  const format = [...caps].find((c) => c.startsWith("object-format="));
  return format && format !== "object-format=sha1" ? format : null;
}

type Memo = Record<string, { at: number; ok: boolean; why?: string }>;

const memoFile = (source: HttpRemoteSource): string | null => (source.stateDir ? join(source.stateDir, "http-remotes.json") : null);

function readMemo(file: string | null): Memo {
  if (!file) return {};
  try {
    const read = JSON.parse(readFileSync(file, "utf8")) as { version?: number; remotes?: Memo };
    return read.version === 1 && read.remotes && typeof read.remotes === "object" ? read.remotes : {};
  } catch {
    return {};
  }
}

function writeMemo(file: string | null, memo: Memo): void {
  if (!file) return;
  const tmp = `${file}.${uniqueSuffix()}.tmp`;
  try {
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(tmp, JSON.stringify({ version: 1, remotes: memo }));
    renameSync(tmp, file);
  } catch {
    /* asked again by the next process */
  }
}

/** receive-pack's report: band 1 holds its pkt-lines (`unpack ok`, `ok <ref>`, `ng <ref> <reason>`), band 2 its messages. */
function readReport(body: Buffer): { unpack: string; refs: Map<string, { ok: true } | { ok: false; reason: string }>; said: string } | null {
  const report: Buffer[] = [];
  const said: string[] = [];
  let ended = false;
  for (const p of pktLines(body)) {
    if (p === null) return null;
    if (p === FLUSH_MARK) {
      ended = true;
      break;
    }
    if (p === DELIM_MARK || p.length === 0) continue;
    const band = p[0];
    if (band === 1) report.push(p.subarray(1));
    else if (band === 2) said.push(p.subarray(1).toString("utf8"));
    else if (band === 3) return null; // receive-pack died: what landed is not known
  }
  if (!ended) return null;
  let unpack: string | null = null;
  const refs = new Map<string, { ok: true } | { ok: false; reason: string }>();
  let complete = false;
  for (const p of pktLines(Buffer.concat(report))) {
    if (p === null) return null;
    if (p === FLUSH_MARK) {
      complete = true;
      break;
    }
    if (p === DELIM_MARK) continue;
    const line = p.toString("utf8").replace(/\n$/, "");
    if (unpack === null) {
      if (!line.startsWith("unpack ")) return null;
      unpack = line.slice(7);
    } else if (line.startsWith("ok ")) refs.set(line.slice(3), { ok: true });
    else if (line.startsWith("ng ")) {
      const sp = line.indexOf(" ", 3);
      refs.set(sp < 0 ? line.slice(3) : line.slice(3, sp), { ok: false, reason: sp < 0 ? "rejected" : line.slice(sp + 1) });
    }
  }
  if (!complete || unpack === null) return null;
  // What git push prints as "remote: ..." lines.
  const text = said
    .join("")
    .split(/[\r\n]+/)
    .filter((l) => l.trim())
    .map((l) => `remote: ${l}`)
    .join("\n");
  return { unpack, refs, said: text };
}

const FLUSH = Buffer.from("0000");
const DELIM = Buffer.from("0001");
const FLUSH_MARK = Symbol("flush");
const DELIM_MARK = Symbol("delim");

/** One pkt-line: four hex digits of length (its own four included), then the data. */
function pkt(data: string): Buffer {
  const b = Buffer.from(data, "utf8");
  return Buffer.concat([Buffer.from((b.length + 4).toString(16).padStart(4, "0"), "latin1"), b]);
}

/** The pkt-lines of `body` in order; null where one is not well formed (and nothing after it). */
function* pktLines(body: Buffer): Generator<Buffer | typeof FLUSH_MARK | typeof DELIM_MARK | null> {
  let i = 0;
  while (i < body.length) {
    const head = body.toString("latin1", i, i + 4);
    if (!/^[0-9a-f]{4}$/.test(head)) return yield null;
    const n = parseInt(head, 16);
    if (n === 0) yield FLUSH_MARK;
    else if (n === 1) yield DELIM_MARK;
    else if (n < 4 || i + n > body.length) return yield null;
    else yield body.subarray(i + 4, i + n);
    i += n === 0 || n === 1 ? 4 : n;
  }
}

type Answer = { ok: true; status: number; type: string; body: Buffer; date: string | null } | { ok: false; message: string; connected: boolean; timedOut: boolean };

/** One HTTP/1.1 request on its own connection, bounded by `until`; never throws. */
function request(target: Target, method: "GET" | "POST", path: string, headers: Record<string, string>, body: Buffer | null, until: number): Promise<Answer> {
  return new Promise((resolve) => {
    let connected = false;
    let done = false;
    const finish = (a: Answer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(a);
    };
    const http = nodeHttp();
    const req = http.request({
      host: target.host,
      port: target.port,
      method,
      path,
      agent: false,
      headers: { ...headers, "User-Agent": `${AGENT} (smart HTTP)`, ...(body ? { "Content-Length": String(body.length) } : {}) },
    });
    const timer = setTimeout(
      () => {
        finish({ ok: false, message: `${target.url} did not answer within the deadline`, connected, timedOut: true });
        req.destroy();
      },
      Math.max(0, until - Date.now()),
    );
    req.on("socket", (s) => s.once("connect", () => (connected = true)));
    req.on("error", (e) => finish({ ok: false, message: `${target.url}: ${(e as Error).message}`, connected, timedOut: false }));
    req.on("response", (res: Http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (c: Buffer) => {
        size += c.length;
        if (size > MAX_ANSWER) {
          finish({ ok: false, message: `${target.url} answered more than ${MAX_ANSWER} bytes`, connected: true, timedOut: false });
          req.destroy();
        } else chunks.push(c);
      });
      const date = typeof res.headers.date === "string" ? res.headers.date : null;
      res.on("end", () => finish({ ok: true, status: res.statusCode ?? 0, type: String(res.headers["content-type"] ?? "").split(";")[0]!.trim(), body: Buffer.concat(chunks), date }));
      res.on("error", (e) => finish({ ok: false, message: `${target.url}: ${e.message}`, connected: true, timedOut: false }));
    });
    req.end(body ?? undefined);
  });
}

type GetBuiltin = <T>(id: string) => T;

/** node:http on first use (a one-shot command that never pushes over HTTP never loads it). */
function nodeHttp(): typeof Http {
  const get = (process as unknown as { getBuiltinModule?: GetBuiltin }).getBuiltinModule;
  return get ? get<typeof Http>("node:http") : (require("node:http") as typeof Http);
}
