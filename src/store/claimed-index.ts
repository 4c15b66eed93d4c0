// Which tasks are claimed, for one-shot commands, without a record per task. A claim's capacity
// check and its overlap advisory look only at claimed tasks, but finding them meant parsing every
// task's record (from tasks.cache, or from git): O(all tasks) in each one-shot claim. A task's
// stored status is a fact of its commit, so `.git/handoff/claimed.index` keeps one line per task
// ref, `<ref> <commit> <status>`: a listing compares those commits with the current tips and reads
// the records only of tasks whose tip moved, then of the claimed ones. Lines are appended (one
// write with O_APPEND; the last line of a ref wins), and the file is written anew only when it has
// grown past twice the task refs. A cache keyed by commits (DESIGN: thrown away and rebuilt at
// will): a torn or foreign line is passed over, and a wrong commit only costs a read.
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { HandoffError } from "../core/errors.ts";
import type { Task } from "../core/task.ts";
import type { RefTip } from "../git/refs.ts";
import { readSmallFile, writeSmallFile } from "./small-file.ts";
import type { Store } from "./store.ts";
import { readTaskAt, TASKS_PREFIX } from "./task-store.ts";

const HEADER = "handoff-claimed-index 1";
const LINE = /^(\S+) ([0-9a-f]{40}(?:[0-9a-f]{24})?) (todo|claimed|done|failed|cancelled|review)$/;

/**
 * The tips of the tasks stored as claimed, with their records, in the order of `tips`. A record
 * that cannot be read is left out, as a listing leaves it out of its tasks.
 */
export async function claimedFromIndex(store: Store, tips: readonly RefTip[]): Promise<Task[]> {
  const path = join(store.repo.commonDir, "handoff", "claimed.index");
  const text = readSmallFile(path);
  const known = new Map<string, { oid: string; status: string }>();
  let lines = 0;
  if (text?.startsWith(`${HEADER}\n`)) {
    for (const line of text.split("\n")) {
      const m = LINE.exec(line);
      if (!m || !m[1]!.startsWith(TASKS_PREFIX)) continue;
      known.set(m[1]!, { oid: m[2]!, status: m[3]! });
      lines++;
    }
  }
  const fresh: string[] = [];
  const claimed: Task[] = [];
  for (const t of tips) {
    const k = known.get(t.name);
    if (k && k.oid === t.oid) {
      if (k.status === "claimed") {
        const task = await readOrSkip(store, t);
        if (task) claimed.push(task);
      }
      continue;
    }
    const task = await readOrSkip(store, t);
    if (!task) continue;
    fresh.push(`${t.name} ${t.oid} ${task.status}\n`);
    if (task.status === "claimed") claimed.push(task);
  }
  try {
    if (!text?.startsWith(`${HEADER}\n`) || lines + fresh.length > 2 * tips.length + 64) {
      const current = new Map([...known].map(([name, k]) => [name, `${name} ${k.oid} ${k.status}\n`]));
      for (const l of fresh) current.set(l.slice(0, l.indexOf(" ")), l);
      const names = new Set(tips.map((t) => t.name));
      writeSmallFile(path, `${HEADER}\n${[...current].filter(([n]) => names.has(n)).map(([, l]) => l).join("")}`);
    } else if (fresh.length) appendFileSync(path, fresh.join(""));
  } catch {
    /* a cache that cannot be written only makes the next listing slower */
  }
  return claimed;
}

async function readOrSkip(store: Store, t: RefTip): Promise<Task | null> {
  try {
    return await readTaskAt(store, t.name, t.oid);
  } catch (e) {
    if (e instanceof HandoffError) return null;
    throw e;
  }
}
