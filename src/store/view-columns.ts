// The view file's columns (record-cache-listing.ts): what the walks over every open task read
// (core/view-tasks.ts), one field a column, before the records. At 10,000 tasks the bounded text
// parsed 7,500 records (2.9 MB, and the collections that promoted them) to show some sixty lines;
// the columns are a seventh of that, no object a task, and each record is parsed only where a
// line shows it. The numbers are typed arrays' bytes in base64 (one JSON string each, decoded by
// Buffer, no number parsed a task: 7,500 claim times as JSON numbers cost as much as the rest) and
// indexes into short tables (statuses, agents, branches).
import { TASK_STATUSES, type TaskStatus } from "../core/task.ts";
import { firstBases, flagsOf, heldScopesOf, type ViewTasks } from "../core/view-tasks.ts";
import type { ViewTask } from "../core/view-task.ts";

export interface ViewColumns {
  ids: string[];
  /** Each task's status as one character: its index in `statuses` from "0". */
  st: string;
  statuses: string[];
  agents: string[];
  branches: string[];
  /** The byte order of the typed arrays below (the writer's): a reader of the other order reads the file as none. */
  order: "LE" | "BE";
  /** Int32: the claim's agent (its index in `agents`), -1 without a claim. */
  holder: string;
  /** Float64: the claim's expiry, claim time and ttl (ms), NaN without a claim (or a time Date.parse cannot read). */
  exp: string;
  cl: string;
  ttl: string;
  /** Int32: the claim's branch (its index in `branches`), -1 without. */
  br: string;
  /** Uint8: flagsOf each task (view-tasks.ts). */
  fl: string;
  /** Float64: where each record starts in the records' array text, and where the array ends (one more than the records). */
  at: string;
  /** Each agent's earliest claim's base (firstBases), and the scopes of the tasks it holds (heldScopesOf), as pairs. */
  bases: [string, string][];
  scopes: [string, string[]][];
}

export interface ViewHead {
  version: number;
  counted: Partial<Record<TaskStatus, number>>;
  columns: ViewColumns;
}

// The list the schema is built from, not its options: reading those sets zod up (lazy-zod.mjs),
// ~150 KB of the young generation in every command whose bundle holds this module.
const STATUSES: readonly TaskStatus[] = TASK_STATUSES;
const ORDER = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? "LE" : "BE";

type Typed = Float64Array | Int32Array | Uint8Array;
const base64 = (a: Typed) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString("base64");

type TypedOf<T extends Typed> = { new (n: number): T; new (buffer: ArrayBufferLike, at: number, n: number): T; BYTES_PER_ELEMENT: number };

/** The typed array of `n` values whose bytes `text` holds in base64 (over the decoded bytes where they are aligned); throws when they are not `n`. */
function typed<T extends Typed>(make: TypedOf<T>, text: unknown, n: number): T {
  const bytes = Buffer.from(typeof text === "string" ? text : "", "base64");
  if (bytes.length !== n * make.BYTES_PER_ELEMENT) throw new Error("a column of another length");
  if (bytes.byteOffset % make.BYTES_PER_ELEMENT === 0) return new make(bytes.buffer, bytes.byteOffset, n);
  const out = new make(n);
  new Uint8Array(out.buffer).set(bytes);
  return out;
}

/** The columns of `tasks`, whose records' JSON texts are `records` (written as one array after them). */
export function writeColumns(tasks: readonly ViewTask[], records: readonly string[]): ViewColumns {
  const n = tasks.length;
  const agents = new Map<string, number>();
  const branches = new Map<string, number>();
  const indexIn = (m: Map<string, number>, s: string) => m.get(s) ?? m.set(s, m.size).get(s)!;
  const [holder, br] = [new Int32Array(n).fill(-1), new Int32Array(n).fill(-1)];
  const [exp, cl, ttl, at] = [new Float64Array(n).fill(NaN), new Float64Array(n).fill(NaN), new Float64Array(n).fill(NaN), new Float64Array(n + 1)];
  const fl = new Uint8Array(n);
  let st = "";
  at[0] = 1;
  for (let i = 0; i < n; i++) {
    const t = tasks[i]!;
    const claim = t.claim;
    st += String.fromCharCode(48 + STATUSES.indexOf(t.status));
    fl[i] = flagsOf(t);
    at[i + 1] = at[i]! + records[i]!.length + 1;
    if (!claim) continue;
    holder[i] = indexIn(agents, claim.agent);
    exp[i] = Date.parse(claim.expires_at);
    cl[i] = Date.parse(claim.claimed_at);
    ttl[i] = claim.ttl_ms;
    if (claim.branch != null) br[i] = indexIn(branches, claim.branch);
  }
  // The order is the reader's (columnsFrom): the short tables first, then the ids, then the
  // numbers in NUMBERS' order.
  return {
    st,
    statuses: [...STATUSES],
    agents: [...agents.keys()],
    branches: [...branches.keys()],
    order: ORDER,
    bases: [...firstBases(tasks)],
    scopes: [...heldScopesOf(tasks)],
    ids: tasks.map((t) => t.id),
    holder: base64(holder),
    br: base64(br),
    fl: base64(fl),
    exp: base64(exp),
    cl: base64(cl),
    ttl: base64(ttl),
    at: base64(at),
  };
}

/** The columns decoded: each task's numbers, and where its record is. */
export interface ReadColumns {
  c: ViewColumns;
  holder: Int32Array;
  exp: Float64Array;
  cl: Float64Array;
  ttl: Float64Array;
  br: Int32Array;
  fl: Uint8Array;
  at: Float64Array;
}

/** `c` decoded, or null when a column is missing, of another length or byte order (a file of another build). */
export function readColumns(c: Partial<ViewColumns>): ReadColumns | null {
  if (!Array.isArray(c.ids) || typeof c.st !== "string" || c.st.length !== c.ids.length || c.order !== ORDER) return null;
  if (![c.statuses, c.agents, c.branches, c.bases, c.scopes].every(Array.isArray)) return null;
  const n = c.ids.length;
  try {
    return { c: c as ViewColumns, holder: typed(Int32Array, c.holder, n), exp: typed(Float64Array, c.exp, n), cl: typed(Float64Array, c.cl, n), ttl: typed(Float64Array, c.ttl, n), br: typed(Int32Array, c.br, n), fl: typed(Uint8Array, c.fl, n), at: typed(Float64Array, c.at, n + 1) };
  } catch {
    return null;
  }
}

/** The numeric columns, in the order they close the columns' JSON, with the bytes of each value. */
const NUMBERS: readonly [keyof ViewColumns, number, number][] = [
  ["holder", 4, 0],
  ["br", 4, 0],
  ["fl", 1, 0],
  ["exp", 8, 0],
  ["cl", 8, 0],
  ["ttl", 8, 0],
  ["at", 8, 1],
];
const IDS_AT = ',"ids":[';

/**
 * The columns whose JSON is `bytes` from `from` to `to`, decoded. Parsed as JSON, the 400 KB of
 * base64 at 10,000 tasks are scanned a character at a time, and each of the 7,500 short ids is
 * looked up in V8's string table: as writeColumns orders them, only the short tables are parsed,
 * the ids are cut from their array's text and each number column is taken where its length puts
 * it. Any other text (another order, an id with an escape in it) is parsed whole, as before.
 */
export function columnsFrom(bytes: Buffer, from: number, to: number): ReadColumns | null {
  // One string of the whole (past the young generation's largest object, as the parse's was):
  // the ids and the base64 are slices of it, not copies.
  const text = bytes.toString("latin1", from, to);
  return cutColumns(text) ?? readColumns((JSON.parse(text) ?? {}) as Partial<ViewColumns>);
}

/** The columns' JSON `text` as writeColumns orders it, cut where each column must be; null for any other text. */
export function cutColumns(text: string): ReadColumns | null {
  const idsAt = text.indexOf(IDS_AT);
  if (idsAt < 0) return null;
  let c: Record<string, unknown>;
  try {
    c = JSON.parse(`${text.slice(0, idsAt)}}`) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (typeof c !== "object" || c === null || typeof c.st !== "string") return null;
  const n = c.st.length;
  const list = idsAt + IDS_AT.length;
  // The list ends where the first number column starts: a bare quote is never inside a string.
  const listEnd = text.indexOf(`],"${NUMBERS[0]![0]}":"`, list);
  if (listEnd < 0) return null;
  const quoted = text.slice(list, listEnd);
  // No backslash: no id holds an escape (nor a quote, which is escaped), so '","' only separates them.
  if (quoted.includes("\\")) return null;
  const ids = n === 0 ? (quoted === "" ? [] : null) : quoted.length >= 2 && quoted.startsWith('"') && quoted.endsWith('"') ? quoted.slice(1, -1).split('","') : null;
  if (!ids || ids.length !== n) return null;
  c.ids = ids;
  let at = listEnd + 1;
  for (const [name, size, extra] of NUMBERS) {
    const open = `,"${name}":"`;
    const length = 4 * Math.ceil(((n + extra) * size) / 3);
    if (!text.startsWith(open, at) || text.charCodeAt(at + open.length + length) !== 0x22) return null;
    c[name] = text.slice(at + open.length, at + open.length + length);
    at += open.length + length + 1;
  }
  return at === text.length - 1 && text.charCodeAt(at) === 0x7d ? readColumns(c as Partial<ViewColumns>) : null;
}

/** The tasks the columns describe; `text(i)` is record i's JSON, parsed when first asked for. */
export function viewColumns(r: ReadColumns, text: (i: number) => string): ViewTasks {
  const { c } = r;
  const n = c.ids.length;
  const expires = new Float64Array(n).fill(NaN);
  const [status, holder, branch] = [new Array<TaskStatus>(n), new Array<string | undefined>(n), new Array<string | null>(n)];
  // Each table and column in a local, each cell read once: the loop runs 7,500 times at 10,000
  // tasks in a cold process, in the interpreter, where every property read is an instruction.
  const { statuses, st, agents, branches } = c;
  const { holder: holders, br, exp } = r;
  for (let i = 0; i < n; i++) {
    const s = statuses[st.charCodeAt(i) - 48] as TaskStatus;
    status[i] = s;
    const h = holders[i]!;
    holder[i] = h >= 0 ? agents[h] : undefined;
    const b = br[i]!;
    branch[i] = b >= 0 ? branches[b]! : null;
    if (h >= 0 && s === "claimed") expires[i] = exp[i]!;
  }
  const bases = new Map(c.bases);
  const scopes = new Map(c.scopes);
  const parsed = new Map<number, ViewTask>();
  return {
    length: n,
    ids: c.ids,
    status,
    holder,
    expires,
    claimedAt: r.cl,
    ttl: r.ttl,
    branch,
    flags: r.fl,
    firstBase: (agent) => bases.get(agent) ?? null,
    heldScopes: (agent) => scopes.get(agent) ?? [],
    record: (i) => parsed.get(i) ?? parsed.set(i, JSON.parse(text(i)) as ViewTask).get(i)!,
  };
}
