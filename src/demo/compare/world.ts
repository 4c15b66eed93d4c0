// One run of the compare workload: a fresh copy of the sample repository, one linked worktree per
// agent, and a scheduler on the scripted clock. Agents are deterministic scripts; each step they
// take is real git (and, in the coordinated run, the real git-handoff CLI and hooks) in its own
// process. Every commit an agent makes records its task and when it started, so the report can be
// recounted from git alone.
import { Sandbox, type Run, type Session } from "../sandbox.ts";
import { prepareRepo, type WorkTask } from "./workload.ts";

/** Scripted minutes a task's work takes, and how long an agent waits before looking again. */
export const WORK_MIN = 10;
export const POLL_MIN = 2;
export const START = Date.parse("2026-01-05T09:00:00Z");

export interface RunOptions {
  agents: number;
  seed: number;
  tasks: WorkTask[];
  keep?: boolean;
}

export interface Agent extends Session {
  index: number;
}

export type Step = (world: World, agent: Agent) => number | null;

export class World {
  readonly box: Sandbox;
  readonly agents: Agent[];
  /** Scripted time now, in ms. Steps run one at a time; each gets a later second than the last. */
  private now = START;
  /** Wall-clock ms spent inside git-handoff CLI calls: what coordination costs. */
  cliMs = 0;
  cliCalls = 0;
  /** Scripted ms agents spent waiting (blocked, or for a dependency they did not know about). */
  waitedMs = 0;

  constructor(
    readonly name: string,
    readonly opts: RunOptions,
  ) {
    // Setup happens a minute before the agents start, on the scripted clock like everything else.
    this.box = new Sandbox(new Date(START - 60_000), `handoff-compare-${name}-`);
    this.box.datedCommits = true;
    this.box.createRepo();
    prepareRepo(this.box, null);
    this.agents = Array.from({ length: opts.agents }, (_, i) => ({ ...this.box.addWorktree(`agent-${i + 1}`, `agent-${i + 1}/home`), index: i }));
  }

  get repo(): string {
    return this.box.repo;
  }

  time(): number {
    return this.now;
  }

  iso(ms = this.now): string {
    return new Date(ms).toISOString();
  }

  /** git-handoff as an agent (or the lead), timed as coordination cost. */
  handoff(who: Agent | null, args: string[]): Run {
    const t0 = performance.now();
    const r = this.box.handoff(who, args);
    this.cliMs += performance.now() - t0;
    this.cliCalls++;
    return r;
  }

  git(who: Agent | null, args: string[]): Run {
    return this.box.git(who, args);
  }

  mustGit(who: Agent | null, args: string[]): string {
    const r = this.git(who, args);
    if (r.code !== 0) throw new Error(`${who?.agent ?? "lead"}: git ${args.join(" ")} failed (${r.code}): ${(r.stderr || r.stdout).trim()}`);
    return r.stdout.trim();
  }

  /** A commit of everything in the agent's worktree, with the trailers the report reads. */
  commit(who: Agent, task: WorkTask, attempt: number, startedMs: number): Run {
    this.mustGit(who, ["add", "-A"]);
    return this.git(who, ["commit", "-q", "-m", `${task.id}: ${task.objective}\n\nTask: ${task.id}\nAttempt: ${attempt}\nStarted: ${this.iso(startedMs)}\nHandoff-Task: ${task.id}`]);
  }

  /** The lead merges a branch into main (the integration every run ends in); false on a conflict. */
  merge(branch: string, author: Agent | null): boolean {
    const r = this.git(author, ["-C", this.repo, "merge", "--no-ff", "-q", "-m", `merge ${branch}`, branch]);
    if (r.code === 0) return true;
    this.git(null, ["-C", this.repo, "merge", "--abort"]);
    return false;
  }

  /**
   * Runs every agent's script until each says it is finished (null). A step returns when the agent
   * wants its next turn (scripted ms); the earliest turn goes next, ties by agent order.
   */
  schedule(step: Step, limit = 2_000): void {
    const next = new Map<Agent, number>(this.agents.map((a) => [a, START]));
    for (let n = 0; next.size; n++) {
      if (n >= limit) throw new Error(`${this.name}: the agents did not finish within ${limit} steps`);
      const [agent, at] = [...next].sort((a, b) => a[1] - b[1] || a[0].index - b[0].index)[0]!;
      this.now = Math.max(at, this.now + 1000);
      this.box.setNow(this.now);
      const again = step(this, agent);
      if (again === null) next.delete(agent);
      else next.set(agent, again);
    }
  }

  remove(): void {
    if (!this.opts.keep) this.box.remove();
  }
}

export const minutes = (n: number) => n * 60_000;
