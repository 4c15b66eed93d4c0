// `.git/handoff/leases.cache`, the lease set a one-shot process read at a tip (lease-store.ts says
// why there is one): the tip's commit id, `#format N` (the stored format), then `#index <json>`,
// then one lease per line, `<key>\t<lease as JSON>\n`, in the set's order. The key is the first
// folder of the pattern, `*` when that is a glob or the pattern names a file at the root.
//
// The index names where each key's lines lie (runs of bytes after the index line; the set is kept
// in pattern order, so a key's lines are mostly one run) and which keys hold each agent's leases.
// A check of a few paths, which the pre-edit hook makes before every edit, then reads the lines
// that can answer for them and the caller's own: a few KB where the whole file is ~270 KB at 1,000
// leases (reading and decoding it was ~2-4 ms of the hook's ~10 on this machine, most of it the
// kernel's page faults on the fresh buffer and string).
//
// A cache written by a build before the index (no `#index` line) is read whole, as it was. A build
// before the index reading this one finds a line without a key where its first lease should be,
// calls it torn, reads the record from git and writes the cache its own way.
import { closeSync, fstatSync } from "node:fs";
import type { Lease, LeaseSet } from "../core/lease.ts";
import { isGlob } from "../core/paths.ts";
import { readAt } from "../git/read-at.ts";
import { openNoFollow } from "../git/safe-file.ts";
import { writeSmallFile } from "./small-file.ts";

/** Which leases a read needs: those that could cover `paths`, and all of `agent`'s. Unset: all. */
export interface LeaseFilter {
  paths: string[];
  agent: string;
}

/** What the head of a cache of the wanted tip says, and its leases on demand. */
export interface CachedLeases {
  /** The stored format, null when the cache does not say (an older build's). */
  format: number | null;
  /** `#fresh` (builds before the sixteenth session): objects the cache counts on, or null. */
  fresh: string | null;
  /** The leases `filter` needs (all without one); null when the file is torn or foreign. */
  leases(filter?: LeaseFilter): { set: LeaseSet; partial: boolean } | null;
}

/** Where each key's lines lie after the index line, which keys hold each agent's leases (pairs, read for the caller only), and the body's length. */
interface Index {
  body: number;
  runs: Map<string, [number, number][]>;
  agents: unknown[];
}

/** Bytes read first: the head lines and, for most sets, the index. */
const HEAD_BYTES = 16 * 1024;

export function cacheKey(pattern: string): string {
  const first = pattern.split("/", 1)[0]!;
  return isGlob(first) || !pattern.includes("/") ? "*" : first;
}

export function saveLeaseCache(file: string, tip: string, set: LeaseSet, format: number): void {
  // Maps, serialised as pairs: a folder named `__proto__` is a key like any other.
  const runs = new Map<string, [number, number][]>();
  const agents = new Map<string, Set<string>>();
  const lines: string[] = [];
  let at = 0;
  for (const l of set.leases) {
    const key = cacheKey(l.pattern);
    const line = `${key}\t${JSON.stringify(l)}\n`;
    const n = Buffer.byteLength(line);
    const own = runs.get(key) ?? runs.set(key, []).get(key)!;
    const last = own.at(-1);
    if (last && last[0] + last[1] === at) last[1] += n;
    else own.push([at, n]);
    (agents.get(l.agent) ?? agents.set(l.agent, new Set()).get(l.agent)!).add(key);
    lines.push(line);
    at += n;
  }
  const index = JSON.stringify({ b: at, k: [...runs], a: [...agents].map(([a, keys]) => [a, [...keys]]) });
  writeSmallFile(file, `${tip}\n#format ${format}\n#index ${index}\n${lines.join("")}`);
}

/**
 * Opens the cache and, when its first line is `tip`, hands `use` what it holds; null when there is
 * no cache or it names another tip. The file stays open while `use` runs: a writer replacing it
 * meanwhile (a rename) leaves this reader on the file it opened.
 */
export function readLeaseCache<T>(file: string, tip: string, use: (c: CachedLeases) => T): T | null {
  let fd: number;
  try {
    fd = openNoFollow(file);
  } catch {
    return null;
  }
  try {
    const size = fstatSync(fd).size;
    let buf = size <= HEAD_BYTES ? readAt(fd, 0, size) : readAt(fd, 0, HEAD_BYTES);
    if (!buf || buf.length <= tip.length || buf.toString("latin1", 0, tip.length + 1) !== `${tip}\n`) return null;
    let at = tip.length + 1;
    const line = (prefix: string): string | null => {
      if (buf!.toString("latin1", at, at + prefix.length) !== prefix) return null;
      let nl = buf!.indexOf(10, at);
      if (nl < 0 && buf!.length < size) {
        // A head longer than the first read (an index of many folders and agents): the whole file.
        buf = readAt(fd, 0, size);
        nl = buf ? buf.indexOf(10, at) : -1;
      }
      if (nl < 0) return null;
      const text = buf!.toString("utf8", at + prefix.length, nl);
      at = nl + 1;
      return text;
    };
    const formatLine = line("#format ");
    const format = formatLine !== null && /^[123]$/.test(formatLine) ? Number(formatLine) : null;
    const fresh = line("#fresh ");
    const indexLine = line("#index ");
    const index = indexLine === null ? null : parseIndex(indexLine);
    const bodyAt = at;
    const torn = indexLine !== null && (!index || bodyAt + index.body !== size);
    const whole = (): string | null => {
      if (buf!.length < size) buf = readAt(fd, 0, size);
      return buf ? buf.toString("utf8", bodyAt) : null;
    };
    return use({
      format,
      fresh,
      leases(filter) {
        if (torn) return null;
        const want = wanted(filter);
        if (!want || !index) {
          const text = whole();
          return text === null ? null : parseLines([{ key: null, text }], want);
        }
        const own = agentKeys(index.agents, filter!.agent);
        if (!own) return null;
        const keys = new Set([...want.keys, ...own]);
        const runs = [...keys].flatMap((key) => (index.runs.get(key) ?? []).map(([off, n]) => ({ key, off, n }))).sort((x, y) => x.off - y.off);
        const pieces: { key: string; text: string }[] = [];
        for (const r of runs) {
          // A file read whole already (most caches: a few hundred leases fit the first read) is cut, not read again.
          const b = buf!.length === size ? buf!.subarray(bodyAt + r.off, bodyAt + r.off + r.n) : readAt(fd, bodyAt + r.off, r.n);
          if (!b) return null;
          pieces.push({ key: r.key, text: b.toString("utf8") });
        }
        const read = parseLines(pieces, want);
        return read && { set: read.set, partial: true };
      },
    });
  } finally {
    closeSync(fd);
  }
}

// Runs once in a cold process, before the pre-edit hook answers, all of it interpreted: for 100
// folders and 100 agents (~5 KB) JSON.parse takes ~0.23 ms and the checks ~0.4-0.5 ms, written
// with callbacks or without (measured both ways). Only the caller's agent entry is looked at.
function parseIndex(text: string): Index | null {
  try {
    const j = JSON.parse(text) as { b: unknown; k: unknown; a: unknown };
    if (typeof j.b !== "number" || !Array.isArray(j.k) || !Array.isArray(j.a)) return null;
    const runs = new Map<string, [number, number][]>();
    const lengths = new Map<number, number>();
    for (const e of j.k as unknown[]) {
      if (!Array.isArray(e) || typeof e[0] !== "string" || !Array.isArray(e[1])) return null;
      const list = e[1] as unknown[];
      for (const r of list) {
        if (!Array.isArray(r) || r.length !== 2 || !Number.isSafeInteger(r[0]) || !Number.isSafeInteger(r[1]) || r[1] <= 0 || lengths.has(r[0])) return null;
        lengths.set(r[0], r[1]);
      }
      runs.set(e[0], list as [number, number][]);
    }
    // Every byte of the body in one run, none in two: a line the index left out would be a lease
    // no filtered read could see (each line read is checked to carry its run's key).
    const starts = Float64Array.from(lengths.keys()).sort();
    let end = 0;
    for (const off of starts) {
      if (off !== end) return null;
      end = off + lengths.get(off)!;
    }
    if (end !== j.b) return null;
    return { body: j.b, runs, agents: j.a as unknown[] };
  } catch {
    return null;
  }
}

/** The folders holding `agent`'s leases, from the index's pairs (only the caller's entry is looked at); null when out of shape. */
function agentKeys(pairs: unknown[], agent: string): string[] | null {
  for (const e of pairs) {
    if (!Array.isArray(e) || e[0] !== agent) continue;
    if (!Array.isArray(e[1])) return null;
    for (const k of e[1] as unknown[]) if (typeof k !== "string") return null;
    return e[1] as string[];
  }
  return [];
}

/** The keys whose lines can cover `filter`'s paths, and the caller's lines to pick out elsewhere; null: every line (no filter, or a glob path). */
function wanted(filter?: LeaseFilter): { keys: Set<string>; mine: string } | null {
  if (!filter || filter.paths.some((p) => isGlob(p.split("/", 1)[0]!))) return null;
  // A file at the root can only be covered by a root-level or glob-first pattern (key `*`).
  return { keys: new Set(["*", ...filter.paths.filter((p) => p.includes("/")).map(cacheKey)]), mine: `"agent":${JSON.stringify(filter.agent)},` };
}

/**
 * The leases of `pieces`' lines that `want` needs (each line's key checked against the key its run
 * was indexed under, when it was); null on a line out of shape: a torn or foreign file, which the
 * caller reads from git instead.
 */
function parseLines(pieces: { key: string | null; text: string }[], want: { keys: Set<string>; mine: string } | null): { set: LeaseSet; partial: boolean } | null {
  const leases: Lease[] = [];
  try {
    for (const { key, text } of pieces) {
      if (key !== null && !text.endsWith("\n")) return null;
      for (let i = 0; i < text.length; ) {
        let nl = text.indexOf("\n", i);
        if (nl < 0) nl = text.length;
        const tab = text.indexOf("\t", i);
        if (tab < 0 || tab > nl) return null;
        const k = text.slice(i, tab);
        if (key !== null && k !== key) return null;
        if (!want || want.keys.has(k) || text.slice(tab, nl).includes(want.mine)) leases.push(JSON.parse(text.slice(tab + 1, nl)) as Lease);
        i = nl + 1;
      }
    }
  } catch {
    return null;
  }
  return { set: { leases }, partial: want !== null };
}
