// Protocol v2 requests to upload-pack and the reading of its answers (gitprotocol-v2), whatever
// carries them: a POST over smart HTTP (http-remote.ts), `git upload-pack` on this machine's pipe or
// a git:// connection (stream-remote.ts). A listing is one `ls-refs` with the prefixes asked for, in
// `git ls-remote`'s output form; a fetch is one `fetch` with `done` (no negotiation rounds: the
// caller offers what it has), whose packfile section is read and checked by pack-read.ts. Every
// answer is another machine's bytes: read whole only up to MAX_ANSWER. A fetch's answer past a
// bound, or out of shape once the server has taken the request (not pkt-lines, a section that is
// not the packfile, the server's own error, a pack that does not parse), is refused as such, with
// what was wrong: handed to git, the same server could answer git's fetch with what git writes to
// disk before anything judges it. Only a server that does not speak what is asked (no protocol v2,
// no `fetch`: its advertisement says so) is git's. A listing out of shape is git's to make: it
// writes no object.
import type { GitObject } from "./object-reader.ts";
import { readPack, type PackBound, type PackShape } from "./pack-read.ts";
import { DELIM, DELIM_MARK, FLUSH, FLUSH_MARK, pkt, pktLines } from "./pkt-line.ts";

/** The largest answer read (a listing of 10,000 tasks is ~700 KB). */
export const MAX_ANSWER = 32 * 1024 * 1024;

/**
 * A fetch of this process's: the objects, or why not. `bound`: the remote's answer is refused (it
 * passed a bound, or was out of shape: `message` says which), nothing of it written, and it is
 * never handed to git; the caller keeps the refs asked for back, as it does refs whose objects the
 * remote cannot send. Without it the remote failed (the answer broke off, an HTTP error): the
 * remote is taken as out of reach for now, not handed to git either.
 */
export type FetchAnswer = ({ ok: true } & Fetched) | { ok: false; message: string; timedOut: boolean; bound?: true };

/** A fetch that is git's to make: the remote is not the plain case this process speaks (why, in words). */
export interface GitsFetch {
  gits: string;
}

/** A fetch's pack as it came (`pack`: checked whole; a large one is kept as a pack, named-fetch.ts) and its objects. */
export interface Fetched {
  objects: Map<string, GitObject>;
  pack: Buffer;
}

/** What a refused fetch says when the remote's answer passed `bound` (said in words). */
export function pastBound(from: string, bound: string): FetchAnswer {
  return { ok: false, message: `${from} sent ${bound}: the fetch is refused, nothing of it written`, timedOut: false, bound: true };
}

/** What a refused fetch says when the remote's answer was out of shape (`what`, in words). */
export function outOfShape(from: string, what: string): FetchAnswer {
  return { ok: false, message: `${from} answered the fetch with ${what}: the fetch is refused, nothing of it written`, timedOut: false, bound: true };
}

/** The answer that ran past MAX_ANSWER, in pastBound's words. */
export const ANSWER_BOUND = `an answer of more than ${MAX_ANSWER} bytes, past the bound on one answer`;

export function lsRefsRequest(prefixes: string[]): Buffer {
  return Buffer.concat([pkt("command=ls-refs\n"), pkt("object-format=sha1\n"), DELIM, ...[...new Set(prefixes)].map((p) => pkt(`ref-prefix ${p}\n`)), FLUSH]);
}

/** A fetch of `wants` offering `haves` (SHA-1 ids), or null when one of them is not an id. */
export function fetchRequest(wants: string[], haves: string[]): Buffer | null {
  if (!wants.length || ![...wants, ...haves].every((o) => /^[0-9a-f]{40}$/.test(o))) return null;
  return Buffer.concat([
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
}

/**
 * An ls-refs answer (from `from` in `body`) as `git ls-remote` prints it (`<oid>\t<name>` lines),
 * or null when it is not one, or names a ref outside `prefixes`.
 */
// Read as one latin1 string, each line tested by one regex: a sync with nothing new reads this
// once, in code not yet compiled, and a pkt-line reader's Buffer a line, its own string and match
// a line took 11 ms for 1,000 refs there (1 ms this way). The same answers as pktLines' reading
// (test/ls-refs-answer.test.ts holds the two side by side).
export function readListing(body: Buffer, prefixes: string[], from = 0): string | null {
  const s = body.toString("latin1", from);
  let text = "";
  let i = 0;
  while (i < s.length) {
    if (!PKT_HEAD.test(s.slice(i, i + 4))) return null; // not pkt-lines: git says what the remote is
    const n = parseInt(s.slice(i, i + 4), 16);
    if (n === 0) return text;
    if (i + n > s.length) return null; // cut off
    // A delimiter (0001) or a length under 4 slices to "", which is no ref line either.
    const line = s.slice(i + 4, i + n);
    if (!REF_LINE.test(line)) return null; // an ERR, or not an answer to what was asked
    const name = line.slice(41, line.endsWith("\n") ? -1 : undefined);
    let asked = false;
    for (const x of prefixes) if (name.startsWith(x)) asked = true;
    if (!asked) return null;
    text += `${line.slice(0, 40)}\t${name}\n`;
    i += n;
  }
  return null;
}

const PKT_HEAD = /^[0-9a-f]{4}$/;
const REF_LINE = /^[0-9a-f]{40} refs\/[^\x00-\x20\x7f]+\n?$/;

/**
 * A fetch's answer (from `from` in `body`): with `done` sent it is the packfile section alone,
 * "packfile" then the pack on side band 1. The pack and its objects, the bound the pack passes, or
 * what is out of shape (an ERR, a fatal error on band 3 and the remote's words are all refused
 * here: the server took the request and did not send the pack).
 */
export function readFetched(body: Buffer, from = 0): Fetched | PackBound | PackShape {
  const parts: Buffer[] = [];
  let section: string | null = null;
  let ended = false;
  for (const p of pktLines(body, from)) {
    if (p === null) return { shape: section === null ? "what is not pkt-lines" : "pkt-lines cut off or not well formed" };
    if (p === DELIM_MARK) return { shape: "a section delimiter where the packfile section was" };
    if (p === FLUSH_MARK) {
      ended = true;
      break;
    }
    if (section === null) {
      section = p.toString("latin1").replace(/\n$/, "");
      if (section.startsWith("ERR ")) return { shape: `an error: ${said(section.slice(4))}` };
      // shallow-info, acknowledgments: answers to what was never asked (no depth, `done` sent).
      if (section !== "packfile") return { shape: `a section "${said(section)}" where the packfile section was` };
      continue;
    }
    if (p[0] === 1) parts.push(p.subarray(1));
    else if (p[0] === 3) return { shape: `an error: ${said(p.subarray(1).toString("utf8"))}` };
    else if (p[0] !== 2) return { shape: `a pkt-line on side band ${p[0]}` };
  }
  if (section === null) return { shape: ended ? "an empty answer" : "nothing" };
  if (!ended) return { shape: "a packfile section cut off before its end" };
  const pack = Buffer.concat(parts);
  const objects = readPack(pack);
  return objects instanceof Map ? { objects, pack } : objects;
}

/** The remote's words, on one line, cut to 200 characters: they go into a message and the quarantine's reason. */
function said(text: string): string {
  const line = text.replace(/[\x00-\x1f\x7f]+/g, " ").trim();
  return line.length > 200 ? `${line.slice(0, 200)}...` : line;
}

/**
 * The capability advertisement a v2 server sends first over a connection of its own (not over
 * HTTP, where each request stands alone): "version 2", then a capability a line, then a flush.
 * What it offers and where the answer after it starts. A server that says it speaks something
 * else (a v0 ref advertisement, an ERR: the repository is not there, or not exported), or says
 * nothing at all, is git's (`gits`); bytes that are not pkt-lines, or a v2 advertisement that
 * does not end, are out of shape (`shape`).
 */
export function readAdvertisement(body: Buffer): { caps: Map<string, string>; end: number } | GitsFetch | PackShape {
  const caps = new Map<string, string>();
  let pos = 0;
  let first = true;
  if (body.length === 0) return { gits: "the server closed the connection without a word" };
  for (const p of pktLines(body)) {
    if (p === null || p === DELIM_MARK) return { shape: first ? "what is not pkt-lines" : "a capability advertisement cut off or not well formed" };
    pos += 4;
    if (p === FLUSH_MARK) return first ? { gits: "no capability advertisement (not protocol v2)" } : { caps, end: pos };
    pos += p.length;
    const line = p.toString("latin1").replace(/\n$/, "");
    if (first) {
      if (line !== "version 2") return { gits: line.startsWith("ERR ") ? `the server's error: ${said(line.slice(4))}` : "not protocol v2" };
      first = false;
      continue;
    }
    const eq = line.indexOf("=");
    caps.set(eq < 0 ? line : line.slice(0, eq), eq < 0 ? "" : line.slice(eq + 1));
  }
  return { shape: "a capability advertisement cut off before its end" };
}

/** Whether an advertisement offers `command` on SHA-1 objects, as this process asks for it. */
export function offers(caps: Map<string, string>, command: "ls-refs" | "fetch"): boolean {
  const format = caps.get("object-format");
  return caps.has(command) && (format === undefined || format === "sha1");
}
