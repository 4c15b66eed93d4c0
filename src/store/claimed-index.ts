// Which tasks are claimed, for one-shot commands, without a record per task. A claim's capacity
// check and its overlap advisory look only at claimed tasks, but finding them meant parsing every
// task's record (from tasks.cache, or from git): O(all tasks) in each one-shot claim. A task's
// stored status is a fact of its commit, so `.git/handoff/claimed.index` keeps one line per task
// ref, `<ref> <commit> <status>`, and for a claimed task its record as JSON after a tab (what the
// claim reads of it; validated when it was read from git, as tasks.cache's lines are): a listing
// compares those commits with the current tips and reads only the records of tasks whose tip moved.
// Lines are appended (one write with O_APPEND; the last line of a ref wins), and the file is
// written anew only when it has grown past twice the task refs. A cache keyed by commits (DESIGN:
// thrown away and rebuilt at will): a torn or foreign line is passed over, and a wrong commit only
// costs a read.
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { HandoffError } from "../core/errors.ts";
import { TASK_STATUSES, type Task } from "../core/task.ts";
import type { RefTip } from "../git/refs.ts";
import { readSmallFile, writeSmallFile } from "./small-file.ts";
import type { Store } from "./store.ts";
import { readTaskAt, TASKS_PREFIX } from "./task-store.ts";

const HEADER = "handoff-claimed-index 2";
const STATUSES = new Set<string>(TASK_STATUSES);
const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

interface Entry {
  oid: string;
  status: string;
  /** A claimed task's record as JSON (what a claim reads of it), else undefined. */
  json?: string;
  /** The line itself, written again as it is when the file is rewritten. */
  line: string;
}

/**
 * The records of the tasks stored as claimed, in the order of `tips`. A record that cannot be
 * read is left out, as a listing leaves it out of its tasks.
 */
export async function claimedFromIndex(store: Store, tips: readonly RefTip[]): Promise<Task[]> {
  const path = join(store.repo.commonDir, "handoff", "claimed.index");
  const text = readSmallFile(path);
  const ours = !!text?.startsWith(`${HEADER}\n`);
  const { known, lines } = ours ? parseIndex(text!) : { known: new Map<string, Entry>(), lines: 0 };
  const fresh: string[] = [];
  const claimed: Task[] = [];
  for (const t of tips) {
    const k = known.get(t.name);
    if (k && k.oid === t.oid) {
      if (k.status !== "claimed") continue;
      const task = (k.json !== undefined && recordOf(k.json, t.name)) || (await readOrSkip(store, t));
      if (task) claimed.push(task);
      continue;
    }
    const task = await readOrSkip(store, t);
    if (!task) continue;
    fresh.push(lineOf(t, task));
    if (task.status === "claimed") claimed.push(task);
  }
  try {
    if (!ours || lines + fresh.length > 2 * tips.length + 64) {
      const current = new Map<string, string>();
      for (const [name, k] of known) current.set(name, `${k.line}\n`);
      for (const l of fresh) current.set(l.slice(0, l.indexOf(" ")), l);
      const names = new Set(tips.map((t) => t.name));
      writeSmallFile(path, `${HEADER}\n${[...current].filter(([n]) => names.has(n)).map(([, l]) => l).join("")}`);
    } else if (fresh.length) appendFileSync(path, fresh.join(""));
  } catch {
    /* a cache that cannot be written only makes the next listing slower */
  }
  return claimed;
}

function lineOf(t: RefTip, task: Task): string {
  return `${t.name} ${t.oid} ${task.status}${task.status === "claimed" ? `\t${JSON.stringify(task)}` : ""}\n`;
}

/**
 * Every sound line, the last one of each ref winning; a torn or foreign line is passed over.
 * `lines`: all lines after the header, sound or not (what decides a rewrite).
 */
function parseIndex(text: string): { known: Map<string, Entry>; lines: number } {
  const known = new Map<string, Entry>();
  let lines = 0;
  let at = text.indexOf("\n") + 1;
  while (at < text.length) {
    let end = text.indexOf("\n", at);
    if (end < 0) end = text.length;
    const line = text.slice(at, end);
    at = end + 1;
    lines++;
    const a = line.indexOf(" ");
    const b = line.indexOf(" ", a + 1);
    if (a < 0 || b < 0) continue;
    const name = line.slice(0, a);
    const oid = line.slice(a + 1, b);
    const tab = line.indexOf("\t", b + 1);
    const status = line.slice(b + 1, tab < 0 ? undefined : tab);
    if (!name.startsWith(TASKS_PREFIX) || !OID.test(oid) || !STATUSES.has(status)) continue;
    known.set(name, tab < 0 ? { oid, status, line } : { oid, status, json: line.slice(tab + 1), line });
  }
  return { known, lines };
}

/** A claimed task's record from its line, or null when the line is torn or names another task. */
function recordOf(json: string, ref: string): Task | null {
  try {
    const task = JSON.parse(json) as Task;
    return task && typeof task === "object" && ref === TASKS_PREFIX + task.id && task.status === "claimed" ? task : null;
  } catch {
    return null;
  }
}

async function readOrSkip(store: Store, t: RefTip): Promise<Task | null> {
  try {
    return await readTaskAt(store, t.name, t.oid);
  } catch (e) {
    if (e instanceof HandoffError) return null;
    throw e;
  }
}
