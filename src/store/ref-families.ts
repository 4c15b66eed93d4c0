// Every ref family under refs/handoff/: how its refs are named, the record its commits hold, the
// format version, who may write it and how big its objects may be. Sync checks what it receives
// against this table before anything enters refs/handoff/ (src/sync/validate-receive.ts), so a new
// family or a new record format is added here, once.
import type * as z from "zod/mini";
import { AgentRecord, declaredAt } from "../core/agent.ts";
import { HandoffEvent } from "../core/event.ts";
import { refComponentProblem } from "../core/ids.ts";
import { LeaseSet } from "../core/lease.ts";
import { LEASE_TREE_FORMAT } from "./lease-tree-format.ts";
import { Task } from "../core/task.ts";
import { TASK_FORMAT_V2 } from "./task-format.ts";
import { Memory, memoryTextProblem } from "../core/memory.ts";
import { MAX_OUTPUT_BYTES, TaskInputs, TaskResultFiles } from "../core/task-files.ts";
import { docContentProblem, MAX_DOC_BYTES } from "../core/shared-doc.ts";
import { LoopRecord } from "../core/loop-record.ts";

/** The record format this build writes and reads (the `format` file of every record tree). */
export const FORMAT_VERSION = 1;

export interface SizeBounds {
  /** Bytes of a commit object (header and message). */
  commit: number;
  /** Entries in a commit's tree. */
  treeEntries: number;
  /** Bytes of the record blob. */
  blob: number;
}

export interface RefFamily {
  family: string;
  /** `single`: exactly refs/handoff/<family>; `per-id`: refs/handoff/<family>/<id>, one component. */
  layout: "single" | "per-id";
  /** The record file beside `format` in each commit's tree; null for the archive (one file per task). */
  file: string | null;
  schema: z.ZodMiniType<unknown> | null;
  /**
   * The newest record format of this family that this build reads (and writes). Tasks are written
   * in format 1 unless a field older builds would drop still matters (task-format.ts).
   */
  format: number;
  /**
   * `cas`: anyone, by compare-and-swap, each commit a legal operation on its parent's state.
   * `owner`: only the agent the ref is named after (a heartbeat may replace its parent).
   * `anyone`: append-only records anyone may write (the gc log, the archive).
   */
  writers: "cas" | "owner" | "anyone";
  bounds: SizeBounds;
  /** What the record's own name field must equal, when the ref carries an id. */
  idOf?: (record: unknown) => string | undefined;
  /** For a family whose file is not a JSON record (a document's text): why its bytes are refused, or null. */
  checkRaw?: (content: Buffer) => string | null;
  /** Beyond the schema: why a record is refused that a local write would refuse too (one rule for both), or null. */
  checkRecord?: (record: unknown) => string | null;
  /** Folders of files beside the record (a task's inputs and results); their readers check names and sizes again. */
  folders?: string[];
  /**
   * For a family whose record is its writer's whole state as of one moment, written anew each time
   * (an agent's declaration; a heartbeat even replaces its parent): that moment, in ms. Sync lays a
   * version over another only when it is later, so an older state never ends up on top.
   */
  stateAt?: (record: unknown) => number;
}

const KB = 1024;
const MB = 1024 * KB;

export const REF_FAMILIES: readonly RefFamily[] = [
  { family: "tasks", layout: "per-id", file: "task.json", schema: Task as z.ZodMiniType<unknown>, format: TASK_FORMAT_V2, writers: "cas", bounds: { commit: 64 * KB, treeEntries: 2, blob: 512 * KB }, idOf: (r) => (r as Task).id },
  { family: "leases", layout: "single", file: "leases.json", schema: LeaseSet as z.ZodMiniType<unknown>, format: LEASE_TREE_FORMAT, writers: "cas", bounds: { commit: 64 * KB, treeEntries: 2, blob: 4 * MB } },
  { family: "agents", layout: "per-id", file: "agent.json", schema: AgentRecord as z.ZodMiniType<unknown>, format: 1, writers: "owner", bounds: { commit: 64 * KB, treeEntries: 2, blob: 256 * KB }, idOf: (r) => (r as AgentRecord).agent, stateAt: (r) => declaredAt(r as AgentRecord) },
  { family: "log", layout: "per-id", file: "event.json", schema: HandoffEvent as z.ZodMiniType<unknown>, format: 1, writers: "owner", bounds: { commit: 64 * KB, treeEntries: 2, blob: 64 * KB }, idOf: (r) => (r as HandoffEvent).agent },
  { family: "gc-log", layout: "single", file: "agent.json", schema: AgentRecord as z.ZodMiniType<unknown>, format: 1, writers: "anyone", bounds: { commit: 64 * KB, treeEntries: 2, blob: 256 * KB } },
  { family: "archive", layout: "single", file: null, schema: null, format: 1, writers: "anyone", bounds: { commit: 256 * KB, treeEntries: 200_000, blob: 512 * KB } },
  { family: "memories", layout: "per-id", file: "memory.json", schema: Memory as z.ZodMiniType<unknown>, format: 1, writers: "cas", bounds: { commit: 64 * KB, treeEntries: 2, blob: 32 * KB }, idOf: (r) => (r as Memory).id, checkRecord: memoryRecordProblem },
  { family: "inputs", layout: "per-id", file: "inputs.json", schema: TaskInputs as z.ZodMiniType<unknown>, format: 1, writers: "anyone", bounds: { commit: 64 * KB, treeEntries: 4, blob: 256 * KB }, idOf: (r) => (r as TaskInputs).task, folders: ["context", "files"] },
  { family: "results", layout: "per-id", file: "result.json", schema: TaskResultFiles as z.ZodMiniType<unknown>, format: 1, writers: "anyone", bounds: { commit: 64 * KB, treeEntries: 3, blob: MAX_OUTPUT_BYTES + 64 * KB }, idOf: (r) => (r as TaskResultFiles).task, folders: ["files"] },
  { family: "docs", layout: "per-id", file: "content", schema: null, format: 1, writers: "cas", bounds: { commit: 64 * KB, treeEntries: 2, blob: MAX_DOC_BYTES }, checkRaw: docContentProblem },
  { family: "loop", layout: "single", file: "loop.json", schema: LoopRecord as z.ZodMiniType<unknown>, format: 1, writers: "cas", bounds: { commit: 64 * KB, treeEntries: 2, blob: 512 * KB } },
];

/** The family named `name` (`tasks`, `leases`...), or undefined when this build knows none by that name. */
export function familyNamed(name: string): RefFamily | undefined {
  return REF_FAMILIES.find((f) => f.family === name);
}

export type RefPlace = { kind: "known"; family: RefFamily; id: string | null } | { kind: "unknown"; family: string } | { kind: "bad"; reason: string };

/** Which family a `refs/handoff/...` name belongs to, and whether its name fits that family's layout. */
export function placeOf(ref: string): RefPlace {
  const rest = ref.startsWith("refs/handoff/") ? ref.slice("refs/handoff/".length) : null;
  if (rest === null) return { kind: "bad", reason: "not under refs/handoff/" };
  const [head, ...tail] = rest.split("/");
  const family = familyNamed(head ?? "");
  if (!family) return { kind: "unknown", family: head ?? "" };
  if (family.layout === "single") return tail.length === 0 ? { kind: "known", family, id: null } : { kind: "bad", reason: `refs/handoff/${family.family} has no sub-refs` };
  if (tail.length !== 1) return { kind: "bad", reason: `refs/handoff/${family.family}/ holds one name component per ref, got ${JSON.stringify(tail.join("/"))}` };
  const problem = refComponentProblem(tail[0]!);
  if (problem) return { kind: "bad", reason: `the name ${JSON.stringify(tail[0])} ${problem}` };
  return { kind: "known", family, id: tail[0]! };
}

/** The format version a record tree's `format` file declares, or null when it is not ours. */
export function formatVersionOf(marker: string): number | null {
  const m = /^git-handoff (\d{1,6})\n$/.exec(marker);
  return m ? Number(m[1]) : null;
}

/** A memory's text as a local write checks it (memoryTextProblem): a received one holding a terminal escape is refused too. */
function memoryRecordProblem(record: unknown): string | null {
  // A tombstone is never shown; it keeps the text it had, which an older build may have taken.
  if ((record as Memory).removed) return null;
  const problem = memoryTextProblem((record as Memory).text);
  return problem ? `its text ${problem}` : null;
}
