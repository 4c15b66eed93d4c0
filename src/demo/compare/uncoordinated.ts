// The uncoordinated run: the same agents with plain git worktrees and a shared task list, as
// parallel agents work without a board. Each picks by its own judgement among the best open tasks
// (open = not yet merged into main: it cannot see what the others are doing), edits, runs the
// tests, and merges its branch into main itself. A failing test is all it learns of a dependency;
// a merge conflict sends it back to redo its work on the new main, unless the task already landed.
import { applyEdits, VERIFY, type WorkTask } from "./workload.ts";
import { minutes, POLL_MIN, WORK_MIN, World, type Agent, type RunOptions } from "./world.ts";

interface State {
  task: WorkTask | null;
  attempt: number;
  started: number;
  /** main's tip when the current attempt started; a failed test is retried once main moves. */
  base: string;
  waiting: boolean;
  /** Tasks this agent merged or gave up on: it does not pick them again. */
  settled: Set<string>;
}

export function runUncoordinated(opts: RunOptions): World {
  const w = new World("without", opts);
  const states = new Map<Agent, State>(w.agents.map((a) => [a, { task: null, attempt: 0, started: 0, base: "", waiting: false, settled: new Set() }]));
  w.schedule((world, agent) => {
    const s = states.get(agent)!;
    if (!s.task) return pick(world, agent, s, opts);
    if (s.waiting) return retry(world, agent, s);
    return finish(world, agent, s);
  });
  return w;
}

/** Task ids whose work has landed on main, read from main's history (the only shared truth). */
export function mergedTasks(w: World): Set<string> {
  const log = w.mustGit(null, ["log", "--format=%B", "main"]);
  return new Set([...log.matchAll(/^Task: (\S+)$/gm)].map((m) => m[1]!));
}

function pick(w: World, agent: Agent, s: State, opts: RunOptions): number | null {
  const merged = mergedTasks(w);
  const open = opts.tasks
    .map((t, i) => ({ t, i }))
    .filter(({ t }) => !merged.has(t.id) && !s.settled.has(t.id))
    .sort((a, b) => b.t.priority - a.t.priority || a.i - b.i);
  if (!open.length) return null;
  // Its own judgement: one of the few best open tasks. With more agents than choices, some pick alike.
  const k = Math.max(1, Math.min(open.length, opts.agents - 1));
  const task = open[(agent.index + opts.seed) % k]!.t;
  s.task = task;
  s.attempt = 1;
  start(w, agent, s);
  return w.time() + minutes(WORK_MIN);
}

function start(w: World, agent: Agent, s: State): void {
  s.started = w.time();
  s.base = w.mustGit(null, ["rev-parse", "main"]);
  s.waiting = false;
  w.mustGit(agent, ["checkout", "-q", "-B", `${agent.agent}/${s.task!.id}-${s.attempt}`, "main"]);
  applyEdits(w.box, agent, s.task!, agent.index);
}

function finish(w: World, agent: Agent, s: State): number {
  const task = s.task!;
  const c = w.commit(agent, task, s.attempt, s.started);
  if (c.code !== 0) throw new Error(`${agent.agent}: commit for ${task.id} failed: ${(c.stderr || c.stdout).trim()}`);
  const tests = w.box.run(agent, "sh", ["-c", VERIFY]);
  if (tests.code !== 0) {
    // It does not know why; it looks again once main has moved on.
    s.waiting = true;
    w.waitedMs += minutes(POLL_MIN);
    return w.time() + minutes(POLL_MIN);
  }
  const branch = `${agent.agent}/${task.id}-${s.attempt}`;
  if (w.merge(branch, agent)) {
    s.settled.add(task.id);
    s.task = null;
    return w.time() + minutes(1);
  }
  if (mergedTasks(w).has(task.id)) {
    // Someone else's version of the same task landed first: this work is thrown away.
    s.settled.add(task.id);
    s.task = null;
    return w.time() + minutes(1);
  }
  s.attempt++;
  start(w, agent, s);
  return w.time() + minutes(WORK_MIN);
}

function retry(w: World, agent: Agent, s: State): number {
  if (w.mustGit(null, ["rev-parse", "main"]) === s.base) {
    w.waitedMs += minutes(POLL_MIN);
    return w.time() + minutes(POLL_MIN);
  }
  if (mergedTasks(w).has(s.task!.id)) {
    s.settled.add(s.task!.id);
    s.task = null;
    return w.time() + minutes(1);
  }
  s.attempt++;
  start(w, agent, s);
  return w.time() + minutes(WORK_MIN);
}
