// The view file's columns (record-cache-listing.ts): what the walks over every open task read
// (core/view-tasks.ts), one array a field, before the records. At 10,000 tasks the bounded text
// parsed 7,500 records (2.9 MB, and the collections that promoted them) to show some sixty lines;
// the columns are a tenth of that, no object a task, and each record is parsed only where a line
// shows it. Numbers and indexes into short tables (statuses, agents, branches), not strings, so
// there is little to parse and nothing to compare by text.
import { TaskStatus } from "../core/task.ts";
import { firstBases, flagsOf, heldScopesOf, type ViewTasks } from "../core/view-tasks.ts";
import type { ViewTask } from "../core/view-task.ts";

export interface ViewColumns {
  ids: string[];
  /** Each task's status as one character: its index in `statuses` from "0". */
  st: string;
  statuses: string[];
  /** The claim's agent (its index in `agents`), -1 without a claim. */
  holder: number[];
  agents: string[];
  /** The claim's expiry, claim time and ttl (ms), null without a claim (or a time Date.parse cannot read). */
  exp: (number | null)[];
  cl: (number | null)[];
  ttl: (number | null)[];
  /** The claim's branch (its index in `branches`), -1 without. */
  br: number[];
  branches: string[];
  /** flagsOf each task (view-tasks.ts). */
  fl: number[];
  /** Each agent's earliest claim's base (firstBases), and the scopes of the tasks it holds (heldScopesOf), as pairs. */
  bases: [string, string][];
  scopes: [string, string[]][];
  /** Where each record starts in the records' array text, and where the array ends (one more than the records). */
  at: number[];
}

export interface ViewHead {
  version: number;
  counted: Partial<Record<TaskStatus, number>>;
  columns: ViewColumns;
}

const STATUSES = TaskStatus.options;

/** The columns of `tasks`, whose records' JSON texts are `records` (written as one array after them). */
export function writeColumns(tasks: readonly ViewTask[], records: readonly string[]): ViewColumns {
  const agents = new Map<string, number>();
  const branches = new Map<string, number>();
  const indexIn = (m: Map<string, number>, s: string) => m.get(s) ?? m.set(s, m.size).get(s)!;
  const known = (ms: number) => (Number.isNaN(ms) ? null : ms);
  const c: ViewColumns = { ids: [], st: "", statuses: [...STATUSES], holder: [], agents: [], exp: [], cl: [], ttl: [], br: [], branches: [], fl: [], bases: [], scopes: [], at: [] };
  let at = 1;
  for (let i = 0; i < tasks.length; i++) {
    const t = tasks[i]!;
    const claim = t.claim;
    c.ids.push(t.id);
    c.st += String.fromCharCode(48 + STATUSES.indexOf(t.status));
    c.holder.push(claim ? indexIn(agents, claim.agent) : -1);
    c.exp.push(claim ? known(Date.parse(claim.expires_at)) : null);
    c.cl.push(claim ? known(Date.parse(claim.claimed_at)) : null);
    c.ttl.push(claim ? claim.ttl_ms : null);
    c.br.push(claim?.branch != null ? indexIn(branches, claim.branch) : -1);
    c.fl.push(flagsOf(t));
    c.at.push(at);
    at += records[i]!.length + 1;
  }
  c.at.push(at);
  c.agents = [...agents.keys()];
  c.branches = [...branches.keys()];
  c.bases = [...firstBases(tasks)];
  c.scopes = [...heldScopesOf(tasks)];
  return c;
}

/** Whether `c` holds every column, each task's of the same length: one short of a field is a file of another build. */
export function wholeColumns(c: Partial<ViewColumns>): c is ViewColumns {
  const n = Array.isArray(c.ids) ? c.ids.length : -1;
  const each = [c.holder, c.exp, c.cl, c.ttl, c.br, c.fl].every((a) => Array.isArray(a) && a.length === n);
  return each && typeof c.st === "string" && c.st.length === n && [c.statuses, c.agents, c.branches, c.bases, c.scopes].every(Array.isArray) && Array.isArray(c.at) && c.at.length === n + 1;
}

/** The tasks the columns describe; `text(i)` is record i's JSON, parsed when first asked for. */
export function viewColumns(c: ViewColumns, text: (i: number) => string): ViewTasks {
  const n = c.ids.length;
  const [expires, claimedAt, ttl] = [0, 1, 2].map(() => new Float64Array(n).fill(NaN)) as [Float64Array, Float64Array, Float64Array];
  const flags = Uint8Array.from(c.fl);
  const [status, holder, branch] = [new Array<TaskStatus>(n), new Array<string | undefined>(n), new Array<string | null>(n)];
  for (let i = 0; i < n; i++) {
    status[i] = c.statuses[c.st.charCodeAt(i) - 48] as TaskStatus;
    const h = c.holder[i]!;
    holder[i] = h >= 0 ? c.agents[h] : undefined;
    branch[i] = c.br[i]! >= 0 ? c.branches[c.br[i]!]! : null;
    if (h < 0) continue;
    if (status[i] === "claimed") expires[i] = c.exp[i] ?? NaN;
    claimedAt[i] = c.cl[i] ?? NaN;
    ttl[i] = c.ttl[i] ?? NaN;
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
    claimedAt,
    ttl,
    branch,
    flags,
    firstBase: (agent) => bases.get(agent) ?? null,
    heldScopes: (agent) => scopes.get(agent) ?? [],
    record: (i) => parsed.get(i) ?? parsed.set(i, JSON.parse(text(i)) as ViewTask).get(i)!,
  };
}
