// Protocol v2 requests to upload-pack and the reading of its answers (gitprotocol-v2), whatever
// carries them: a POST over smart HTTP (http-remote.ts), `git upload-pack` on this machine's pipe or
// a git:// connection (stream-remote.ts). A listing is one `ls-refs` with the prefixes asked for, in
// `git ls-remote`'s output form; a fetch is one `fetch` with `done` (no negotiation rounds: the
// caller offers what it has), whose packfile section is read and checked by pack-read.ts. Every
// answer is another machine's bytes: read whole only up to MAX_ANSWER, and anything out of shape
// is null (the caller's git then says what is wrong in its words), except a pack past a bound,
// which is refused as such: git would write it to disk before judging it.
import type { GitObject } from "./object-reader.ts";
import { readPack, type PackBound } from "./pack-read.ts";
import { DELIM, DELIM_MARK, FLUSH, FLUSH_MARK, pkt, pktLines } from "./pkt-line.ts";

/** The largest answer read (a listing of 10,000 tasks is ~700 KB). */
export const MAX_ANSWER = 32 * 1024 * 1024;

/** A fetch of this process's: the objects, or why not (`bound`: the remote sent more than a bound allows, in `message`). */
export type FetchAnswer = { ok: true } & Fetched | { ok: false; message: string; timedOut: boolean; bound?: true };

/** A fetch's pack as it came (`pack`: checked whole; a large one is kept as a pack, named-fetch.ts) and its objects. */
export interface Fetched {
  objects: Map<string, GitObject>;
  pack: Buffer;
}

/** What a refused fetch says when the remote's answer passed `bound` (said in words). */
export function pastBound(from: string, bound: string): FetchAnswer {
  return { ok: false, message: `${from} sent ${bound}: the fetch is refused, nothing of it written`, timedOut: false, bound: true };
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
export function readListing(body: Buffer, prefixes: string[], from = 0): string | null {
  let text = "";
  for (const p of pktLines(body, from)) {
    if (p === null || p === DELIM_MARK) return null; // not pkt-lines: git says what the remote is
    if (p === FLUSH_MARK) return text;
    const m = /^([0-9a-f]{40}) (refs\/[^\x00-\x20\x7f]+)\n?$/.exec(p.toString("latin1"));
    if (!m || !prefixes.some((x) => m[2]!.startsWith(x))) return null; // an ERR, or not an answer to what was asked
    text += `${m[1]}\t${m[2]}\n`;
  }
  return null;
}

/**
 * A fetch's answer (from `from` in `body`): with `done` sent it is the packfile section alone,
 * "packfile" then the pack on side band 1. The pack and its objects, the bound the pack passes, or null.
 */
export function readFetched(body: Buffer, from = 0): Fetched | PackBound | null {
  const parts: Buffer[] = [];
  let section: string | null = null;
  let ended = false;
  for (const p of pktLines(body, from)) {
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
  const pack = Buffer.concat(parts);
  const objects = readPack(pack);
  return objects && !("bound" in objects) ? { objects, pack } : objects;
}

/**
 * The capability advertisement a v2 server sends first over a connection of its own (not over
 * HTTP, where each request stands alone): "version 2", then a capability a line, then a flush.
 * What it offers and where the answer after it starts; null when it is not a v2 advertisement
 * (a v0 ref advertisement, an ERR: git's to read).
 */
export function readAdvertisement(body: Buffer): { caps: Map<string, string>; end: number } | null {
  const caps = new Map<string, string>();
  let pos = 0;
  let first = true;
  for (const p of pktLines(body)) {
    if (p === null || p === DELIM_MARK) return null;
    pos += 4;
    if (p === FLUSH_MARK) return first ? null : { caps, end: pos };
    pos += p.length;
    const line = p.toString("latin1").replace(/\n$/, "");
    if (first) {
      if (line !== "version 2") return null;
      first = false;
      continue;
    }
    const eq = line.indexOf("=");
    caps.set(eq < 0 ? line : line.slice(0, eq), eq < 0 ? "" : line.slice(eq + 1));
  }
  return null;
}

/** Whether an advertisement offers `command` on SHA-1 objects, as this process asks for it. */
export function offers(caps: Map<string, string>, command: "ls-refs" | "fetch"): boolean {
  const format = caps.get("object-format");
  return caps.has(command) && (format === undefined || format === "sha1");
}
