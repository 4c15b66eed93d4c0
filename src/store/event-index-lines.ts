// The lines of the event index's event key files (all, type-<type>, agent-<key>): how one is
// written, and the two ways they are read. A line is
//   <at> TAB <ref id> TAB <position on the ref> TAB <commit> TAB <event JSON>
// its time first, as it stands in the event (empty where it could not be written plainly: then
// the line is decoded to know it), so that times compare as the lines' own text: `events --limit
// 20` over an agent's ~1,000 lines keeps only the lines of the newest times, one string comparison
// a line, and decodes those (readNewestLines); every other read takes every line (readAllLines).
import type { HandoffEvent } from "../core/event.ts";

/** The live refs among the ids a key file names: each one's place (its order among the refs read) and event count. */
export type RefsOf = (ids: ReadonlySet<number>) => ReadonlyMap<number, { place: number; n: number }>;

/** A committed line of an event key file, its event not yet decoded (decodeLine). */
export interface LineRef {
  oid: string;
  /** Its ref's place (RefsOf's). */
  ref: number;
  seq: number;
  /** The event's time as the line states it; null where it does not. */
  at: string | null;
  /** The event's JSON. */
  json: string;
}

/**
 * Lines of a key file. `partial`: only the lines of the newest times were kept, at least as many
 * as asked for (readNewestLines); lines of older times may exist.
 */
export interface KeyLines {
  lines: LineRef[];
  partial: boolean;
}

/** An event's line (with its line break): see the top of this file. */
export function eventLine(id: number, seq: number, oid: string, event: HandoffEvent): string {
  // A time of other characters (none an event's schema lets in) is not written: read by decoding.
  const at = typeof event.at === "string" && /^[!-~]+$/.test(event.at) ? event.at : "";
  return `${at}\t${id}\t${seq}\t${oid}\t${JSON.stringify(event)}\n`;
}

/** The ref id of an event line (compaction keeps the lines of live ids); NaN when it has none. */
export function eventLineId(line: string): number {
  const a = line.indexOf("\t");
  const b = a < 0 ? -1 : line.indexOf("\t", a + 1);
  return b < 0 ? NaN : Number(line.slice(a + 1, b));
}

/**
 * Every committed line of a key file's text, of the refs refsOf finds live. Null when a line is
 * damaged (the caller drops the index).
 */
export function readAllLines(text: string, refsOf: RefsOf): KeyLines | null {
  const lines = liveLines(rowsOf(text), refsOf);
  return lines && { lines, partial: false };
}

/**
 * The lines of the `keep` newest times at least (every line of a time kept is kept, and lines of
 * refs no longer live count toward `keep` too), newest first; every line when the text has a line
 * whose time is not stated (readAllLines). A line is looked at only as far as its time unless it
 * is kept: damage in the others goes unseen here, as it does in lines never decoded.
 */
export function readNewestLines(text: string, refsOf: RefsOf, keep: number): KeyLines | null {
  if (text.startsWith("\t") || text.includes("\n\t")) return readAllLines(text, refsOf);
  const rows = rowsOf(text);
  // A line's text from its start compares as its time does: a line is at `floor` or above it when
  // its time is the floor's time or later (times are of printable characters, the tab below them).
  let floor = "";
  let kept: string[] = [];
  // Pruned again once the kept lines doubled: lines of one time are all kept (a bulk `task add`
  // writes thousands), and pruning at every line past 2 * keep sorted them all at each.
  let pruneAt = 2 * keep;
  const prune = () => {
    kept.sort(newestFirst);
    const last = kept[keep - 1]!;
    floor = last.slice(0, last.indexOf("\t") + 1);
    kept = kept.filter((row) => row >= floor);
    pruneAt = Math.max(2 * keep, 2 * kept.length);
  };
  // From the end: the newest lines are mostly the last ones written, and the floor rises at once.
  for (let i = rows.length - 1; i >= 0; i--) {
    const row = rows[i]!;
    if (row < floor) continue;
    kept.push(row);
    if (kept.length >= pruneAt) prune();
  }
  if (kept.length > keep) prune();
  const lines = liveLines(kept, refsOf);
  return lines && { lines, partial: kept.length < rows.length };
}

const newestFirst = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);

/** The text's lines, without the empty one after its last line break. */
function rowsOf(text: string): string[] {
  if (!text) return [];
  const rows = text.split("\n");
  if (rows[rows.length - 1] === "") rows.pop();
  return rows;
}

function parse(row: string): { id: number; line: LineRef } | null {
  const t0 = row.indexOf("\t");
  const t1 = t0 < 0 ? -1 : row.indexOf("\t", t0 + 1);
  const t2 = t1 < 0 ? -1 : row.indexOf("\t", t1 + 1);
  const t3 = t2 < 0 ? -1 : row.indexOf("\t", t2 + 1);
  if (t3 < 0) return null;
  const at = t0 ? row.slice(0, t0) : null;
  return { id: Number(row.slice(t0 + 1, t1)), line: { oid: row.slice(t2 + 1, t3), ref: 0, seq: Number(row.slice(t1 + 1, t2)), at, json: row.slice(t3 + 1) } };
}

/** The rows parsed, those of live refs kept (live); null when one is damaged. */
function liveLines(rows: readonly string[], refsOf: RefsOf): LineRef[] | null {
  const parsed: { id: number; line: LineRef }[] = [];
  const ids = new Set<number>();
  for (const row of rows) {
    const p = parse(row);
    if (!p) return null;
    ids.add(p.id);
    parsed.push(p);
  }
  return live(parsed, refsOf(ids));
}

/** The lines of live refs, each given its ref's place; a line past its ref's count is not committed. */
function live(parsed: { id: number; line: LineRef }[], named: ReadonlyMap<number, { place: number; n: number }>): LineRef[] {
  const out: LineRef[] = [];
  for (const { id, line } of parsed) {
    const ref = named.get(id);
    if (!ref || !(line.seq < ref.n)) continue;
    line.ref = ref.place;
    out.push(line);
  }
  return out;
}

/** The event of a line; null when it is damaged (the caller drops the index). */
export function decodeLine(l: LineRef): HandoffEvent | null {
  try {
    const event = JSON.parse(l.json) as HandoffEvent;
    return event && typeof event === "object" && (l.at === null || event.at === l.at) ? event : null;
  } catch {
    return null;
  }
}
