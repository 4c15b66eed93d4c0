// A sync remote over smart HTTP (`http://` or `https://`), pushed to, listed and fetched from in process.
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
// `fetch` request whose pack is read and checked by pack-read.ts (sync/named-fetch.ts writes it).
// The requests and the reading of their answers are upload-pack-v2.ts's, shared with the
// transports that reach upload-pack over a pipe or git:// (stream-remote.ts).
// A process keeps its connection to the remote between requests (a claim's listing, fetch and
// push; a running server's next call): one TCP connection and TLS handshake, not one a request.
// The advertisement send-pack reads first is read once an hour per URL (kept in
// .git/handoff/http-remotes.json): that the remote takes pushes from us and speaks report-status,
// side-band-64k and atomic, and whether it asked for credentials. A remote that redirects, refuses
// the credentials git's helpers give (credentials.ts), or lacks any of those is git's for that
// hour; so is an https:// remote whose certificate this process cannot check as git would.
//
// Only the plain case is taken, as path-remote.ts does for a folder; anything else returns null
// (a fetch: `gits`) and goes to `git push` / `git ls-remote` / `git fetch` as before: an `http://` or `https://` URL without user
// or password, one `remote.<name>.url`, no pushurl, receivepack, uploadpack, proxy for it; no
// `url.*` rewriting, no `protocol.*` setting and no `http.*` one that could apply to the URL, in
// any scope (proxies, headers, cookies, versions, certificates, sslVerify are git's); no proxy in
// the environment (`http_proxy`, `all_proxy`; for https:// `https_proxy` too) and, for https://,
// no GIT_SSL_* setting but GIT_SSL_CAINFO; no push.pushOption; a SHA-1 repository. The
// certificate is checked against GIT_SSL_CAINFO's bundle when it is set (as git's curl checks it),
// else against Node's own roots (Mozilla's, what most systems' bundles are made from; a bundle of
// the system's given as `ca` costs a one-shot process ~35 ms to load); a remote whose certificate
// is not accepted that way (a company's own authority, known to the system only) is git's for the
// hour, and git checks it with its own settings. A request that cannot
// connect goes to git, which says why in its words; one that was sent and not answered is an
// unknown outcome, which the caller reads back from the remote (remote-cas.ts), as it does for
// `git push`. `HANDOFF_HTTP_REMOTE=git` sends everything to git (benchmarks compare both);
// `doctor` says which way a remote goes, and why.
import { readFileSync } from "node:fs";
import { ownFolder, readTextNoFollow, replaceFile } from "./safe-file.ts";
import type * as Http from "node:http";
import type * as Https from "node:https";
import type * as Tls from "node:tls";
import { join } from "node:path";
import type { ConfigEntry } from "./config-scan.ts";
import { approveCredential, basicAuth, fillCredential, type Credential, type CredentialUrl } from "./credentials.ts";
import { packOf } from "./pack-stream.ts";
import { DELIM_MARK, FLUSH, FLUSH_MARK, pkt, pktLines } from "./pkt-line.ts";
import { ANSWER_BOUND, fetchRequest, lsRefsRequest, MAX_ANSWER, outOfShape, pastBound, readFetched, readListing, type FetchAnswer, type GitsFetch } from "./upload-pack-v2.ts";
import { missingObjects, type ObjectSource } from "./push-objects.ts";

type Wanted = (section: string, subsection: string | null, key: string) => boolean;

export interface HttpRemoteSource extends ObjectSource {
  /** This clone's git configuration (all scopes) as config-scan.ts reads it, or null when git must be asked. */
  config(want: Wanted): ConfigEntry[] | null;
  /** Where what was learnt of a remote is kept (.git/handoff), or undefined: asked by every process. */
  stateDir?: string;
  /** Where `git credential` runs, so the clone's credential.* settings apply (the store's git folder or worktree). */
  gitCwd?: string;
}

/** What receive-pack reported: each ref's `ok` or refusal, and what the remote said on the way. */
export type HttpPushResult =
  | { kind: "report"; refs: Map<string, { ok: true } | { ok: false; reason: string }>; remoteText: string }
  /** Nothing was sent (the deadline passed first). */
  | { kind: "unsent"; message: string; timedOut: boolean }
  /** The updates went out and no full report came back: read the remote to learn what happened. `reused`: on a kept connection the remote dropped. */
  | { kind: "unknown"; message: string; timedOut: boolean; reused?: true };

export type HttpListing = { ok: true; text: string } | { ok: false; message: string; timedOut: boolean };

const ZERO = "0".repeat(40);
/** A capability check of a URL is trusted this long. */
const CHECK_MS = 60 * 60 * 1000;
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
  tls: boolean;
  /** The authorities trusted (GIT_SSL_CAINFO's, made into a context once a process), undefined: Node's own roots. */
  trust?: Tls.SecureContext;
  /** The URL as git's credential protocol names it. */
  credentialUrl: CredentialUrl;
  /** What the memo held for the URL when this operation began (read once an operation). */
  seen: MemoEntry | undefined;
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
  if (checked === false) return null;
  if ("message" in checked) return { kind: "unsent", message: checked.message, timedOut: true };
  const objects = await missingObjects(source, updates as { ref: string; new: string; expected: string | null }[]);
  if (!objects) return null;
  const commands = updates.map((u, i) => pkt(`${u.expected ?? ZERO} ${u.new} ${u.ref}${i === 0 ? `\0report-status side-band-64k atomic object-format=sha1 agent=${AGENT}` : ""}`));
  const body = Buffer.concat([...commands, FLUSH, packOf(objects.values())]);
  const sent = await withCredentials(source, target, checked.auth, until, (auth) =>
    request(target, "POST", `${target.base}/git-receive-pack`, { "Content-Type": "application/x-git-receive-pack-request", Accept: "application/x-git-receive-pack-result", ...auth }, body, until),
  );
  // The remote asks for credentials git's helpers do not give without a prompt: git push asks (for the hour).
  if (!sent) {
    remember(source, target, { ok: false, why: "credentials wanted for a push, and none from git's helpers without a prompt" });
    return null;
  }
  const r = sent.answer;
  if (!r.ok) {
    if (r.connected) return { kind: "unknown", message: r.message, timedOut: r.timedOut, ...(r.reused ? { reused: true as const } : {}) };
    return r.timedOut ? { kind: "unsent", message: r.message, timedOut: true } : null;
  }
  if (r.status !== 200 || r.type !== "application/x-git-receive-pack-result") {
    if (!REFUSED_BEFORE.has(r.status)) return { kind: "unknown", message: `${target.url} answered the push with HTTP ${r.status}`, timedOut: false };
    // Refused before receive-pack ran (credentials now asked for, say): git's for the hour.
    remember(source, target, { ok: false, why: `HTTP ${r.status} to a push` });
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
export async function listOverHttp(source: HttpRemoteSource, remote: string, prefixes: string[], timeoutMs: number, signal?: AbortSignal): Promise<HttpListing | null> {
  if (prefixes.some((p) => /[\0\n\r]/.test(p))) return null;
  const target = plainTarget(source, remote);
  if (!target) return null;
  const r = await uploadPack(source, target, lsRefsRequest(prefixes), Date.now() + timeoutMs, signal);
  if (!r.ok) return r.timedOut ? { ok: false, message: `${target.url} did not answer the listing within ${timeoutMs} ms`, timedOut: true } : null;
  if (r.status !== 200 || r.type !== "application/x-git-upload-pack-result") return null;
  const text = readListing(r.body, prefixes);
  return text === null ? null : { ok: true, text };
}

/**
 * The `Date` header of the remote's answer to a listing of one ref (what clock-skew readings take
 * from `git ls-remote` with GIT_TRACE_CURL): `{ date: null }` when it sent none, null when the
 * remote is git's to ask (then so is this).
 */
export async function serverDate(source: HttpRemoteSource, remote: string, ref: string, timeoutMs: number): Promise<{ date: string | null } | null> {
  const target = plainTarget(source, remote);
  if (!target) return null;
  const r = await uploadPack(source, target, lsRefsRequest([ref]), Date.now() + timeoutMs);
  if (!r.ok || r.status !== 200) return null;
  return { date: r.date };
}

/**
 * The objects of `wants` (commit ids the remote listed) that the remote has beyond `haves`, in one
 * protocol v2 `fetch` request, read and checked here (pack-read.ts). `gits` when the fetch is
 * git's: not the plain case, no connection, credentials or a certificate git's settings handle, a
 * refusal before upload-pack ran (a redirect, 401, 403, 404), or an empty answer (a server that
 * took nothing of a v2 request: git's http-backend with an upload-pack older than v2 says nothing).
 * Once upload-pack answered, what is wrong with the answer is this fetch's refusal (`bound`),
 * never git's: the same server could answer git's fetch with what git writes before judging it;
 * an answer past a bound (MAX_ANSWER, a pack's) the same. An answer that broke off, or an HTTP
 * error, is a failure of the remote's (nothing kept back, nothing handed to git).
 */
export async function fetchOverHttp(source: HttpRemoteSource, remote: string, wants: string[], haves: string[], timeoutMs: number, signal?: AbortSignal): Promise<FetchAnswer | GitsFetch> {
  const body = fetchRequest(wants, haves);
  if (!body) return { gits: "an id asked for is not a SHA-1 id" };
  const target = plainTarget(source, remote);
  if (!target) return { gits: "not the plain case of an http(s) remote" };
  const r = await uploadPack(source, target, body, Date.now() + timeoutMs, signal);
  if (!r.ok) {
    if (r.tooLarge) return pastBound(target.url, ANSWER_BOUND);
    if (r.timedOut) return { ok: false, message: `${target.url} did not send the objects within ${timeoutMs} ms`, timedOut: true };
    return r.connected ? { ok: false, message: `${target.url} broke off its answer to the fetch (${r.message})`, timedOut: false } : { gits: r.message };
  }
  if (REFUSED_BEFORE.has(r.status)) return { gits: `HTTP ${r.status} to a fetch` };
  if (r.status !== 200) return { ok: false, message: `${target.url} answered the fetch with HTTP ${r.status}`, timedOut: false };
  if (r.type !== "application/x-git-upload-pack-result") return outOfShape(target.url, `a ${r.type || "typeless"} answer`);
  if (r.body.length === 0) return { gits: "an empty answer to a protocol v2 fetch" };
  const read = readFetched(r.body);
  if ("bound" in read) return pastBound(target.url, read.bound);
  if ("shape" in read) return outOfShape(target.url, read.shape);
  return { ok: true, ...read };
}

/** For `doctor`: whether pushes to and listings of `remote` are done in process, and if not, why; null when its URL is not http(s). */
export function httpRemoteStatus(source: HttpRemoteSource, remote: string): { inProcess: true; url: string; credentials?: string } | { inProcess: false; why: string } | null {
  const r = reach(source, remote);
  if (!("base" in r)) return r.http ? { inProcess: false, why: r.why } : null;
  // What the remote was seen to ask credentials for (none kept here: git's helpers give them).
  const asked = [r.seen?.push?.ok && r.seen.push.auth ? "pushes" : null, r.seen?.readAuth ? "listings and fetches" : null].filter((x) => x !== null);
  return { inProcess: true, url: r.url, ...(asked.length ? { credentials: asked.join(", ") } : {}) };
}

/** The remote as a URL this process sends its own requests to, or null when they are git's. */
function plainTarget(source: HttpRemoteSource, remote: string): Target | null {
  // HANDOFF_HTTP_REMOTE=git reads not even the configuration (the benchmarks' route through git).
  if (disabled()) return null;
  const target = reach(source, remote);
  return "base" in target ? target : null;
}

/**
 * The remote as a URL this process may use, with what the memo holds for it, or why not (`http`:
 * its URL is http(s) at all): the plain case (inspect), this process's own switch and object
 * format, and for https:// a certificate not accepted within the hour (git's then, without a
 * handshake first).
 */
function reach(source: HttpRemoteSource, remote: string): Target | { why: string; http: boolean } {
  const target = inspect(source, remote);
  if (!("base" in target)) return target;
  if (disabled()) return { why: "HANDOFF_HTTP_REMOTE=git", http: true };
  if (source.format !== "sha1") return { why: "this clone's objects are SHA-256", http: true };
  const seen = readMemo(memoFile(source))[target.url];
  if (target.tls && seen?.tls && fresh(seen.tls.at)) return { why: `its certificate was not accepted here within the hour (${seen.tls.why}); git checks it with its own settings`, http: true };
  return { ...target, seen };
}

/** Whether something learnt at `at` is still trusted (CHECK_MS). */
const fresh = (at: number): boolean => at <= Date.now() && Date.now() - at < CHECK_MS;

/**
 * One protocol v2 request to upload-pack (ls-refs, fetch), with credentials where the remote asked
 * for them before (kept in the memo) or asks now. An answer that is not ok (a refusal, a
 * certificate not accepted) sends the caller to git.
 */
async function uploadPack(source: HttpRemoteSource, target: Target, body: Buffer, until: number, signal?: AbortSignal): Promise<Answer> {
  const sent = await withCredentials(source, target, target.seen?.readAuth === true, until, (auth) =>
    readOnly((fresh) => request(target, "POST", `${target.base}/git-upload-pack`, { "Content-Type": "application/x-git-upload-pack-request", Accept: "application/x-git-upload-pack-result", "Git-Protocol": "version=2", ...auth }, body, until, fresh, signal)),
  );
  if (!sent) return { ok: false, message: `${target.url} asks for credentials`, connected: false, timedOut: false };
  const r = sent.answer;
  if (r.ok && r.status === 200 && sent.auth && !target.seen?.readAuth) remember(source, target, { readAuth: true });
  return r;
}

/** Credentials git's helpers gave this process, by URL: in memory only, for that URL only. */
const held = new Map<string, Credential>();

/**
 * `send` with the credential this process holds for the URL, or one git's helpers give when
 * `needed` (the remote asked before); a 401 to a request sent without one asks the helpers and
 * sends once more (a 401 comes before receive-pack or upload-pack runs: nothing happened). A
 * credential that worked for the first time is approved, as git does; one the remote refused is
 * dropped, and git's own request (the caller's fallback) does what git does about it. Null: the
 * remote wants credentials and the helpers gave none without a prompt.
 */
async function withCredentials(
  source: HttpRemoteSource,
  target: Target,
  needed: boolean,
  until: number,
  send: (auth: { Authorization: string } | Record<string, never>) => Promise<Answer>,
): Promise<{ answer: Answer; auth: boolean } | null> {
  const cwd = source.gitCwd ?? process.cwd();
  let cred = held.get(target.url) ?? null;
  let filled = false;
  const ask = async () => {
    const got = await fillCredential(cwd, target.credentialUrl, Math.min(CREDENTIAL_MS, until - Date.now()));
    if (got) held.set(target.url, got), (filled = true);
    return got;
  };
  if (!cred && needed && !(cred = await ask())) return null;
  let answer = await send(cred ? { Authorization: basicAuth(cred) } : {});
  if (answer.ok && answer.status === 401 && !cred) {
    if (!(cred = await ask())) return null;
    answer = await send({ Authorization: basicAuth(cred) });
  }
  // A certificate this process does not accept: git's for the hour (its roots may differ).
  if (!answer.ok && answer.tls) remember(source, target, { tls: answer.message });
  if (!cred) return { answer, auth: false };
  if (answer.ok && answer.status === 401) held.delete(target.url);
  else if (filled && answer.ok && answer.status === 200) await approveCredential(cwd, target.credentialUrl, cred, Math.min(CREDENTIAL_MS, until - Date.now()));
  return { answer, auth: true };
}

/** The longest a credential helper is given (a keychain's unlock, a helper's own network call). */
const CREDENTIAL_MS = 10_000;

/** A ref name of plain components only, as path-remote.ts takes them. */
const PLAIN_REF = /^refs(\/[A-Za-z0-9_@+=-][A-Za-z0-9._@+=-]*)+$/;

/** The remote as a URL this process may use by its configuration and environment, or why not (`http`: its URL is http(s) at all). */
function inspect(source: HttpRemoteSource, remote: string): Omit<Target, "seen"> | { why: string; http: boolean } {
  const mine = source.config((s, sub) => (s === "remote" && sub === remote) || s === "url" || s === "push" || s === "http" || s === "protocol");
  if (!mine) return { why: "this clone's git configuration is more than plain files say (an include, or git -c)", http: false };
  let url: string | null = null;
  const beside: string[] = [];
  const httpSettings: { name: string; subsection: string | null }[] = [];
  for (const e of mine) {
    const name = `${e.section}.${e.subsection === null ? "" : `${e.subsection}.`}${e.key}`;
    if (e.section === "url") beside.push(`${name} (git rewrites URLs)`);
    else if (e.section === "push") {
      if (e.key === "pushoption") beside.push(`${name} (git asks the remote whether it takes them)`);
    } else if (e.section === "protocol") beside.push(`${name} (git's protocol settings)`);
    else if (e.section === "http") httpSettings.push({ name, subsection: e.subsection });
    else if (e.key === "url") {
      if (url !== null || e.value === null) beside.push(`more than one remote.${remote}.url`);
      url = e.value;
    } else if (["pushurl", "receivepack", "uploadpack", "vcs", "proxy", "proxyauthmethod"].includes(e.key)) beside.push(`remote.${remote}.${e.key}`);
  }
  if (url === null || !/^https?:\/\//i.test(url)) return { why: "its URL is not http", http: false };
  const no = (why: string) => ({ why, http: true });
  const tls = /^https:/i.test(url);
  // An http.* setting for every URL, or for a URL of the remote's scheme, may apply (git's
  // matching of http.<url>.* by host, port, path and user is not repeated here): git's.
  const other = tls ? "http://" : "https://";
  const setting = httpSettings.find((h) => !h.subsection?.toLowerCase().startsWith(other));
  if (setting) beside.push(`${setting.name} (git's http settings)`);
  if (beside.length) return no(beside[0]!);
  const env = tls ? TLS_ENV.find((k) => process.env[k]) : HTTP_ENV.find((k) => process.env[k]);
  if (env) return no(`${env} is set in the environment`);
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
  const trust = tls ? trustedAuthorities() : undefined;
  if (trust === null) return no("GIT_SSL_CAINFO names a file this process cannot read");
  const base = u.pathname.replace(/\/+$/, "");
  return {
    url: `${u.protocol}//${u.host}${base}`,
    host,
    port: u.port ? Number(u.port) : tls ? 443 : 80,
    base,
    tls,
    ...(trust ? { trust } : {}),
    credentialUrl: { protocol: tls ? "https" : "http", host: u.host, path: decodeURIComponent(base.replace(/^\//, "")) },
  };
}

// What in the environment makes git's transport differ from this one. For http://, curl's proxies
// (it takes HTTP_PROXY in lower case only); for https://, its proxies and every GIT_SSL_* setting
// but the bundle of authorities (read here).
const HTTP_ENV = ["http_proxy", "all_proxy", "ALL_PROXY", "GIT_HTTP_PROXY_AUTHMETHOD"];
const TLS_ENV = [
  "https_proxy",
  "HTTPS_PROXY",
  "all_proxy",
  "ALL_PROXY",
  "GIT_HTTP_PROXY_AUTHMETHOD",
  "GIT_SSL_NO_VERIFY",
  "GIT_SSL_CAPATH",
  "GIT_SSL_CERT",
  "GIT_SSL_KEY",
  "GIT_SSL_CERT_TYPE",
  "GIT_SSL_KEY_TYPE",
  "GIT_SSL_CERT_PASSWORD_PROTECTED",
  "GIT_SSL_VERSION",
  "GIT_SSL_CIPHER_LIST",
  "GIT_SSL_PINNEDKEY",
];

let authorities: { value: Target["trust"] | null; from: string } | undefined;

/**
 * The authorities a certificate is checked against: GIT_SSL_CAINFO's bundle as a TLS context, made
 * once a process (null when it cannot be read or holds no certificate: git's), undefined without
 * it (Node's own roots).
 */
function trustedAuthorities(): Target["trust"] | null | undefined {
  const from = process.env.GIT_SSL_CAINFO;
  if (!from) return undefined;
  if (authorities?.from === from) return authorities.value;
  let value: Target["trust"] | null;
  try {
    value = builtin<typeof Tls>("node:tls").createSecureContext({ ca: readFileSync(from) });
  } catch {
    value = null;
  }
  authorities = { value, from };
  return value;
}

/**
 * Whether the remote takes our pushes in one request (with credentials or not), is git's (false),
 * or did not answer in time. Read from its receive-pack advertisement, kept for an hour per URL.
 */
async function takesPushes(source: HttpRemoteSource, target: Target, until: number): Promise<{ auth: boolean } | false | { message: string }> {
  const seen = target.seen?.push;
  if (seen && fresh(seen.at)) return seen.ok && { auth: seen.auth === true };
  const sent = await withCredentials(source, target, false, until, (auth) => readOnly((fresh) => request(target, "GET", `${target.base}/info/refs?service=git-receive-pack`, { Accept: "*/*", ...auth }, null, until, fresh)));
  if (!sent) {
    remember(source, target, { ok: false, why: "HTTP 401 and no credentials from git's helpers without a prompt" });
    return false;
  }
  const r = sent.answer;
  if (!r.ok) return r.timedOut ? { message: `${target.url} did not answer within the push's deadline` } : false;
  const why = r.status === 401 && sent.auth ? "HTTP 401 to the credentials git's helpers gave" : r.status !== 200 ? `HTTP ${r.status}` : r.type !== "application/x-git-receive-pack-advertisement" ? `a ${r.type || "typeless"} answer` : lacking(r.body);
  remember(source, target, why ? { ok: false, why } : { ok: true, auth: sent.auth });
  return !why && { auth: sent.auth };
}

type PushCheck = { ok: true; auth?: boolean } | { ok: false; why: string };

/**
 * Keeps what was learnt of the URL for the next hour's requests: the push check's outcome (`ok`:
 * it takes pushes in one request), that upload-pack asks for credentials (`readAuth`), that the
 * certificate was not accepted here (`tls`). Never a credential.
 */
function remember(source: HttpRemoteSource, target: Target, learnt: PushCheck | { readAuth: true } | { tls: string }): void {
  const file = memoFile(source);
  const memo = readMemo(file);
  const at = Date.now();
  const entry: MemoEntry = { ...memo[target.url] };
  if ("readAuth" in learnt) entry.readAuth = true;
  else if ("tls" in learnt) entry.tls = { at, why: learnt.tls };
  else entry.push = { at, ...learnt };
  memo[target.url] = entry;
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

interface MemoEntry {
  push?: PushCheck & { at: number };
  readAuth?: boolean;
  tls?: { at: number; why: string };
}
type Memo = Record<string, MemoEntry>;

const memoFile = (source: HttpRemoteSource): string | null => (source.stateDir ? join(source.stateDir, "http-remotes.json") : null);

function readMemo(file: string | null): Memo {
  if (!file) return {};
  try {
    const read = JSON.parse(readTextNoFollow(file) ?? "null") as { version?: number; remotes?: Memo };
    return read.version === 2 && read.remotes && typeof read.remotes === "object" ? read.remotes : {};
  } catch {
    return {};
  }
}

function writeMemo(file: string | null, memo: Memo): void {
  if (!file) return;
  try {
    ownFolder(join(file, ".."));
    replaceFile(file, JSON.stringify({ version: 2, remotes: memo }));
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

type Answer =
  | { ok: true; status: number; type: string; body: Buffer; date: string | null }
  /**
   * `connected`: the request may have reached the remote. `tls`: the connection was made and its
   * TLS handshake failed (nothing was sent). `reused`: it went out on a kept connection, which the
   * remote may have closed meanwhile. `tooLarge`: the answer ran past MAX_ANSWER and was cut off.
   */
  | { ok: false; message: string; connected: boolean; timedOut: boolean; tls?: boolean; reused?: boolean; tooLarge?: true };

/**
 * A request that changes nothing on the remote (a listing, a fetch, the push check), sent again on
 * a new connection when a kept one failed under it (the remote closed it while it was idle).
 * Pushes are not: what a failed push on a kept connection did is read back, and one read back as
 * not landed goes again once (remote-cas.ts).
 */
async function readOnly(send: (fresh: boolean) => Promise<Answer>): Promise<Answer> {
  const r = await send(false);
  return !r.ok && r.reused && !r.timedOut ? send(true) : r;
}

/** How long a kept connection may stay idle (the remote's own Keep-Alive hint, if shorter, wins). */
const IDLE_MS = 4000;
/** Kept connections, by scheme and trust: a connection is only reused by requests that trust what made it. */
const agents = new Map<Tls.SecureContext | "http" | "https", Http.Agent>();

/**
 * Connections kept between the requests of a process (a claim's listing, fetch and push; a
 * running server's next call): one TCP connection and TLS handshake instead of one per request.
 * Node's agent unrefs an idle connection, so a one-shot command exits as before.
 */
function agentFor(target: Target): Http.Agent {
  const key = target.tls ? (target.trust ?? "https") : "http";
  let agent = agents.get(key);
  if (!agent) {
    const options = { keepAlive: true, timeout: IDLE_MS, maxSockets: 4 };
    agent = target.tls ? new (builtin<typeof Https>("node:https").Agent)(options) : new (builtin<typeof Http>("node:http").Agent)(options);
    agents.set(key, agent);
  }
  return agent;
}

/**
 * One HTTP/1.1 request, bounded by `until`, on a kept connection to the remote or a new one
 * (`fresh`); never throws. Over TLS a new connection counts as sent once its handshake is done: a
 * certificate refused before that sent nothing. `signal` aborted ends it as the deadline would.
 */
function request(target: Target, method: "GET" | "POST", path: string, headers: Record<string, string>, body: Buffer | null, until: number, fresh = false, signal?: AbortSignal): Promise<Answer> {
  return new Promise((resolve) => {
    let reached = false;
    let connected = false;
    let done = false;
    const finish = (a: Answer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", stop);
      resolve(a);
    };
    const options: Https.RequestOptions = {
      host: target.host,
      port: target.port,
      method,
      path,
      agent: fresh ? false : agentFor(target),
      headers: { ...headers, "User-Agent": `${AGENT} (smart HTTP)`, ...(body ? { "Content-Length": String(body.length) } : {}) },
      // GIT_SSL_CAINFO replaces the trusted authorities, as curl's CAINFO does.
      ...(target.trust ? { secureContext: target.trust } : {}),
    };
    const req = target.tls ? builtin<typeof Https>("node:https").request(options) : builtin<typeof Http>("node:http").request(options);
    const stop = () => {
      finish({ ok: false, message: `${target.url} did not answer within the deadline`, connected, timedOut: true });
      req.destroy();
    };
    const timer = setTimeout(stop, Math.max(0, until - Date.now()));
    if (signal?.aborted) stop();
    else signal?.addEventListener("abort", stop, { once: true });
    req.on("socket", (s) => {
      // A kept connection is made (and its handshake done): the request goes out on it at once.
      if (req.reusedSocket) {
        reached = connected = true;
        return;
      }
      s.once("connect", () => {
        reached = true;
        if (!target.tls) connected = true;
      });
      if (target.tls) s.once("secureConnect", () => (connected = true));
    });
    req.on("error", (e) =>
      finish({ ok: false, message: `${target.url}: ${(e as Error).message}`, connected, timedOut: false, ...(target.tls && reached && !connected ? { tls: true } : {}), ...(req.reusedSocket ? { reused: true } : {}) }),
    );
    req.on("response", (res: Http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (c: Buffer) => {
        size += c.length;
        if (size > MAX_ANSWER) {
          finish({ ok: false, message: `${target.url} answered more than ${MAX_ANSWER} bytes`, connected: true, timedOut: false, tooLarge: true });
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

/** node:http or node:https on first use (a one-shot command that never pushes over HTTP never loads them). */
function builtin<T>(id: "node:http" | "node:https" | "node:tls"): T {
  const get = (process as unknown as { getBuiltinModule?: GetBuiltin }).getBuiltinModule;
  return get ? get<T>(id) : (require(id) as T);
}
