// The order `claim --next` tries tasks in, kept between calls: sorting 10,000 tasks by priority,
// age and id on every claim cost more than the claim. The order is that of claimCandidates
// (core/task-ops.ts) and is kept while the listing holds the very same records (a long-running
// store hands them back unchanged while no task ref moved: task-store.ts); settling, which
// depends on the time, is done lazily on the candidates actually looked at.
import { isFinal, type Task } from "../core/task.ts";
import { settle, type OpContext } from "../core/task-ops.ts";

// Made on first use: creating one loads ICU (~25 ms), which a command that sorts nothing never pays.
let collatorMade: Intl.Collator | null = null;
const collator = { compare: (a: string, b: string) => (collatorMade ??= new Intl.Collator()).compare(a, b) };
let last: { input: Task[]; order: Task[] } | null = null;

function sameRecords(a: Task[], b: Task[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Every task not yet final, best first (highest priority, then oldest, then id). */
function orderOf(tasks: Task[]): Task[] {
  if (last && sameRecords(last.input, tasks)) return last.order;
  const order = tasks
    .filter((t) => !isFinal(t.status))
    .sort((a, b) => b.priority - a.priority || (a.created_at === b.created_at ? collator.compare(a.id, b.id) : collator.compare(a.created_at, b.created_at)));
  last = { input: tasks, order };
  return order;
}

/**
 * The claimable tasks (settled at `ctx.now`) that `keep` accepts, best first, as a lazy sequence:
 * a caller that takes the first and, after a lost race, the next, settles only those.
 */
export function* readyCandidates(tasks: Task[], ctx: OpContext, keep: (t: Task) => boolean): Generator<Task> {
  for (const t of orderOf(tasks)) {
    const settled = settle(t, ctx).record;
    if (settled.status === "todo" && keep(settled)) yield settled;
  }
}
