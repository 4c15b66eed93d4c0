// `.git/handoff/leases-<FORMAT>.cache`, the lease set a one-shot process read at a tip (lease-store.ts says
// why there is one): the tip's commit id, `#format N` (the stored format), then the index in two
// lines, `#runs <json>` and `#agents <json>`, then one lease per line, `<key>\t<lease as JSON>\n`,
// in the set's order. The key is the first folder of the pattern, `*` when that is a glob or the
// pattern names a file at the root.
//
// The index names where each key's lines lie and which keys hold each agent's leases. `#runs` is
// the body cut into runs of lines of one key, in file order, as a flat list `[key, bytes, key,
// bytes, ...]` (the set is kept in pattern order, so a key's lines are mostly one run): a run's
// offset is the sum of the lengths before it, so every byte of the body is in exactly one run when
// the lengths add up to the body's, checked in one pass. `#agents` is `[agent, n, key1..keyn,
// agent, ...]`. A check of a few paths, which the pre-edit hook makes before every edit, then
// reads the lines that can answer for them and the caller's own: a few KB where the whole file is
// ~270 KB at 1,000 leases (reading and decoding it was ~2-4 ms of the hook's ~10 on this machine,
// most of it the kernel's page faults on the fresh buffer and string). (Builds of the forty-sixth
// session and before wrote one `#index` line of pairs, `{"b": body, "k": [[key, [[offset, bytes],
// ...]], ...], "a": [[agent, [keys]], ...]}`: at 100 folders and 100 agents its parse and its
// checks, a map of every run and a sort of their offsets, were ~0.4 ms and ~75 KB of the hook's
// heap before it answered, which with the rest brought on a young-generation collection, ~1 ms.)
//
// A cache written by a build before any index (no index line) is read whole, as it was. A build
// reading a cache of another index finds a line without a key where its first lease should be
// (`#index ...` here, `#runs ...` there), calls it torn, reads the record from git and writes the
// cache its own way: builds of both kinds on one repository cost each other reads, never a lease.
//
// A line is a lease as one build's schema decoded it, taken without the schema's check: the format
// is part of the file's name, so a build never reads the file of another lease schema (an upgrade;
// two builds on one clone), and a test pins it to the lease schema's fingerprint
// (test/cache-formats.test.ts). A save removes the files of earlier formats (`leases.cache`: the
// builds before formats), so they neither grow nor linger; never a later format's, so two builds
// on one clone each keep their own.
import { closeSync, fstatSync } from "node:fs";
import type { Lease, LeaseSet } from "../core/lease.ts";
import { isGlob } from "../core/paths.ts";
import { readAtUnpooled as readAt } from "../git/read-at.ts";
import { openNoFollow } from "../git/safe-file.ts";
import { unlinkQuiet, writeSmallFile } from "./small-file.ts";

/** The format of the file, part of its name: bumped with any change of the lease record's schema. */
export const LEASE_CACHE_FORMAT = 1;
/** The file of `format` (another build's, in a test) under the clone's common dir. */
export function leaseCacheFile(commonDir: string, format = LEASE_CACHE_FORMAT): string {
  return `${commonDir}/handoff/leases-${format}.cache`;
}

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

/** `#runs` and `#agents` as parsed (flat lists, checked by parseRuns and agentKeys). */
interface Index {
  runs: unknown[];
  agents: unknown[];
}

/** Bytes read first: the head lines and, for most sets, the index. */
const HEAD_BYTES = 16 * 1024;

export function cacheKey(pattern: string): string {
  const first = pattern.split("/", 1)[0]!;
  return isGlob(first) || !pattern.includes("/") ? "*" : first;
}

/**
 * The JSON each lease of a whole read was parsed from (parseLines), by lease object. A claim reads
 * the whole set from this file, adds its lease and writes the file again: every lease it did not
 * change is written as it was read, not made into JSON again (JSON.stringify of a lease parsed
 * from JSON.stringify's text gives that text). A lease is never changed in place (a changed lease
 * is a new object), so its text stands as long as the object. At 30 leases, making each line
 * again was ~3 KB of a cold claim's young generation a lease.
 */
const readAs = new WeakMap<Lease, string>();

/**
 * The text a lease was read as, where a filtered read finds its holder's lines by it (`wanted`:
 * `"agent":<name>,` as JSON.stringify writes it); else undefined, and the lease is written anew.
 */
function asRead(l: Lease): string | undefined {
  const text = readAs.get(l);
  return text !== undefined && text.includes(`"agent":${JSON.stringify(l.agent)},`) ? text : undefined;
}

export function saveLeaseCache(file: string, tip: string, set: LeaseSet, format: number): void {
  // Flat lists and a Map: a folder named `__proto__` is a key like any other.
  const runs: (string | number)[] = [];
  const agents = new Map<string, Set<string>>();
  // Each line in its pieces, joined once below: a line made whole first was a second copy.
  const pieces: string[] = [];
  for (const l of set.leases) {
    const key = cacheKey(l.pattern);
    const json = asRead(l) ?? JSON.stringify(l);
    const n = Buffer.byteLength(key) + Buffer.byteLength(json) + 2;
    if (runs.length && runs[runs.length - 2] === key) runs[runs.length - 1] = (runs[runs.length - 1] as number) + n;
    else runs.push(key, n);
    (agents.get(l.agent) ?? agents.set(l.agent, new Set()).get(l.agent)!).add(key);
    pieces.push(key, "\t", json, "\n");
  }
  const byAgent = [...agents].flatMap(([a, keys]) => [a, keys.size, ...keys]);
  writeSmallFile(file, `${tip}\n#format ${format}\n#runs ${JSON.stringify(runs)}\n#agents ${JSON.stringify(byAgent)}\n${pieces.join("")}`);
  removeEarlier(file);
}

/** Best effort: removes the files of the formats before this one beside `file` (an unlink each, rarely there). */
function removeEarlier(file: string): void {
  if (!file.endsWith(`/leases-${LEASE_CACHE_FORMAT}.cache`)) return;
  const dir = file.slice(0, file.lastIndexOf("/"));
  unlinkQuiet(`${dir}/leases.cache`);
  for (let n = 1; n < LEASE_CACHE_FORMAT; n++) unlinkQuiet(`${dir}/leases-${n}.cache`);
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
    if (!buf || buf.length <= tip.length) return null;
    // The first read as a string (viewOf); null once the whole file is read, which is looked at
    // in place rather than copied whole into a string of the young generation.
    let view: string | null = viewOf(buf);
    if (!view.startsWith(`${tip}\n`)) return null;
    let at = tip.length + 1;
    const line = (prefix: string): string | null => {
      if (view !== null ? !view.startsWith(prefix, at) : buf!.toString("latin1", at, at + prefix.length) !== prefix) return null;
      let nl = view !== null ? view.indexOf("\n", at) : buf!.indexOf(10, at);
      if (nl < 0 && buf!.length < size) {
        // A head longer than the first read (an index of many folders and agents): the whole file.
        const all = readAt(fd, 0, size);
        if (!all) return null;
        buf = all;
        view = null;
        nl = all.indexOf(10, at);
      }
      if (nl < 0) return null;
      const text = buf!.toString("utf8", at + prefix.length, nl);
      at = nl + 1;
      return text;
    };
    const formatLine = line("#format ");
    const format = formatLine === "1" || formatLine === "2" || formatLine === "3" ? Number(formatLine) : null;
    const fresh = line("#fresh ");
    const runsLine = line("#runs ");
    const agentsLine = runsLine === null ? null : line("#agents ");
    const bodyAt = at;
    const index = runsLine === null || agentsLine === null ? null : parseIndex(runsLine, agentsLine, size - bodyAt);
    const torn = runsLine !== null && !index;
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
        const pieces: { key: string; text: string }[] = [];
        for (const r of runsOf(index.runs, keys)) {
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

/**
 * What was read, as one byte a character: its newlines are the file's (UTF-8 puts no byte 10 inside
 * a character), found by a string's indexOf where a Buffer's was ~0.1 ms at its first call in a
 * process. Each head line is then decoded from the bytes: taking an all-ASCII read's line as its
 * slice of this text asked `isAscii` of the whole read first, whose first call (~30 us, compiled
 * then) cost more than decoding the four lines.
 */
function viewOf(buf: Buffer): string {
  return buf.toString("latin1");
}

// Runs once in a cold process, before the pre-edit hook answers, all of it interpreted: kept to
// two JSON.parse calls of flat lists and one pass over each, allocating little (a young-generation
// collection before the answer costs the hook ~1 ms).
function parseIndex(runsText: string, agentsText: string, body: number): Index | null {
  try {
    const runs = JSON.parse(runsText) as unknown;
    const agents = JSON.parse(agentsText) as unknown;
    return Array.isArray(runs) && Array.isArray(agents) && parseRuns(runs, body) ? { runs, agents } : null;
  } catch {
    return null;
  }
}

/**
 * Whether `runs` is `[key, bytes, ...]` with lengths that add up to the body's: then every byte of
 * the body is in exactly one run, and no line is left out of the index (a line the index left out
 * would be a lease no filtered read could see; each line read is checked to carry its run's key).
 */
function parseRuns(runs: unknown[], body: number): boolean {
  if (runs.length % 2) return false;
  let end = 0;
  for (let i = 0; i < runs.length; i += 2) {
    const n = runs[i + 1];
    if (typeof runs[i] !== "string" || !Number.isSafeInteger(n) || (n as number) <= 0) return false;
    end += n as number;
  }
  return end === body;
}

/** The runs of `keys` (checked by parseRuns), in file order. */
function runsOf(runs: unknown[], keys: Set<string>): { key: string; off: number; n: number }[] {
  const out: { key: string; off: number; n: number }[] = [];
  let off = 0;
  for (let i = 0; i < runs.length; i += 2) {
    const n = runs[i + 1] as number;
    if (keys.has(runs[i] as string)) out.push({ key: runs[i] as string, off, n });
    off += n;
  }
  return out;
}

/** The folders holding `agent`'s leases, from the flat `#agents` list (entries before the caller's are only stepped over); null when out of shape. */
function agentKeys(agents: unknown[], agent: string): string[] | null {
  for (let i = 0; i < agents.length; ) {
    const n = agents[i + 1];
    if (typeof agents[i] !== "string" || !Number.isSafeInteger(n) || (n as number) < 0 || i + 2 + (n as number) > agents.length) return null;
    if (agents[i] === agent) {
      const keys = agents.slice(i + 2, i + 2 + (n as number));
      return keys.every((k) => typeof k === "string") ? (keys as string[]) : null;
    }
    i += 2 + (n as number);
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
        if (!want) {
          // A whole read, which a write may follow (saveLeaseCache writes the text back).
          const json = text.slice(tab + 1, nl);
          const lease = JSON.parse(json) as Lease;
          readAs.set(lease, json);
          leases.push(lease);
        } else if (want.keys.has(k) || text.slice(tab, nl).includes(want.mine)) leases.push(JSON.parse(text.slice(tab + 1, nl)) as Lease);
        i = nl + 1;
      }
    }
  } catch {
    return null;
  }
  return { set: { leases }, partial: want !== null };
}
