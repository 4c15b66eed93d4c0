// The coordinated run: the same agents with git-handoff. Each takes work with `claim --next` (which
// never hands out a blocked task or one whose files another agent holds exclusively), reads and
// acks the handoffs its task depends on, edits through the pre-commit hook, hands its result on,
// and finishes with `done` (the task's verification) -> review -> accept -> merge into main.
import { applyEdits, VERIFY, type WorkTask } from "./workload.ts";
import { minutes, POLL_MIN, WORK_MIN, World, type Agent, type RunOptions } from "./world.ts";

interface State {
  task: WorkTask | null;
  branch: string;
  started: number;
  attempt: number;
  finished: boolean;
}

export function runCoordinated(opts: RunOptions): World {
  const w = new World("with", opts);
  const byId = new Map(opts.tasks.map((t) => [t.id, t]));
  // The git pre-commit hook (the backstop that sees every commit) and the agents' hooks, for real.
  const init = w.handoff(null, ["init"]);
  if (init.code !== 0) throw new Error(`git handoff init failed: ${init.stderr.trim()}`);
  w.mustGit(null, ["add", "-A"]);
  w.mustGit(null, ["commit", "-q", "-m", "git-handoff: agent hook configuration"]);
  for (const t of opts.tasks) {
    const args = ["task", "add", t.objective, "--id", t.id, "--priority", String(t.priority), "--exclusive", "--verify", VERIFY];
    for (const s of t.scope) args.push("--scope", s);
    for (const a of t.after) args.push("--after", a);
    const r = w.handoff(null, args);
    if (r.code !== 0) throw new Error(`task add ${t.id} failed: ${r.stderr.trim()}`);
  }
  const states = new Map<Agent, State>(w.agents.map((a) => [a, { task: null, branch: "", started: 0, attempt: 0, finished: false }]));
  for (const a of w.agents) w.handoff(a, ["session", "start", "--objective", `compare run agent ${a.index + 1}`]);

  w.schedule((world, agent) => {
    const s = states.get(agent)!;
    return s.task ? finish(world, agent, s) : take(world, agent, s, byId);
  });
  return w;
}

function take(w: World, agent: Agent, s: State, byId: Map<string, WorkTask>): number | null {
  const r = w.handoff(agent, ["claim", "--next", "--json"]);
  if (r.code !== 0) {
    const tasks = JSON.parse(w.handoff(agent, ["tasks", "--json"]).stdout) as { status: string }[];
    if (tasks.every((t) => ["done", "failed", "cancelled"].includes(t.status))) return null;
    w.waitedMs += minutes(POLL_MIN);
    return w.time() + minutes(POLL_MIN);
  }
  const task = byId.get((JSON.parse(r.stdout) as { id: string }).id)!;
  s.task = task;
  s.attempt = 1;
  s.started = w.time();
  s.branch = `${agent.agent}/${task.id}`;
  w.mustGit(agent, ["checkout", "-q", "-B", s.branch, "main"]);
  // What the tasks this one waits on handed over: read once, then acknowledged.
  // (A handoff the agent wrote itself needs no delivery: it already knows, and acking it is refused.)
  const inbox = JSON.parse(w.handoff(agent, ["inbox", "--json"]).stdout) as { id: string; producer?: string }[];
  for (const e of inbox) if (e.producer !== agent.agent) w.handoff(agent, ["ack", e.id]);
  applyEdits(w.box, agent, task, agent.index);
  return w.time() + minutes(WORK_MIN);
}

function finish(w: World, agent: Agent, s: State): number {
  const task = s.task!;
  const c = w.commit(agent, task, s.attempt, s.started);
  if (c.code !== 0) throw new Error(`${agent.agent}: commit for ${task.id} refused: ${(c.stderr || c.stdout).trim()}`);
  if (task.contract) {
    const h = w.handoff(agent, ["handoff", task.id, "--contract", task.contract, "--verify", VERIFY]);
    if (h.code !== 0) throw new Error(`${agent.agent}: handoff ${task.id} failed: ${h.stderr.trim()}`);
  }
  const done = w.handoff(agent, ["done", task.id, "--commit", "HEAD"]);
  if (done.code !== 0) {
    // The verification failed: caught before review, the task stays with the agent to fix.
    s.attempt++;
    return w.time() + minutes(WORK_MIN);
  }
  const accept = w.handoff(null, ["review", "accept", task.id]);
  if (accept.code !== 0) throw new Error(`review accept ${task.id} failed: ${accept.stderr.trim()}`);
  // The preview before integrating: what git would conflict on, if anything.
  w.handoff(null, ["conflicts", "--json"]);
  if (!w.merge(s.branch, null)) throw new Error(`merging ${s.branch} conflicted although its files were held exclusively`);
  s.task = null;
  return w.time() + minutes(1);
}
