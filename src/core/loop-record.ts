// The session loop's state at refs/handoff/loop: its units, their worktrees, branches and agents
// (pid and host), and each one's phase. One record, so `loop status` reads it from any worktree
// and `loop run` resumes from it after a crash. It holds no command: a resumed loop runs the
// commands given on its own command line, never ones read from shared state.
import * as z from "zod/mini";
import { refComponentProblem } from "./ids.ts";
import { boundedText, count, isoTime, lazySchema } from "./schema-helpers.ts";

// The record is shared state anyone with push access can write: every name in it becomes a path,
// a branch or an agent's identity, so each is checked here, on receive and on every read.
const refName = () => z.string().check(z.refine((s) => refComponentProblem(s) === null, "expected a name of letters, digits and . _ @ + - (no '..')"));

/** A branch name the loop may merge into: no option, no `..`, no odd characters. */
export function branchNameProblem(b: string): string | null {
  return /^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(b) && !b.includes("..") && !b.includes("//") && !b.endsWith("/") && !b.endsWith(".lock") && b.length <= 200 ? null : "is not a branch name";
}

/** The agent that holds a unit's tasks: named after the loop and the unit, never anyone else. */
export function unitAgent(loopId: string, unitId: string): string {
  return `loop-${loopId}-${unitId}`;
}

export const MERGE_STRATEGIES = ["merge", "squash", "rebase"] as const;
export type MergeStrategy = (typeof MERGE_STRATEGIES)[number];

/**
 * planned -> starting -> running -> ready -> merging -> merged; or conflict (the merge preview
 * found conflicts), unverified (--verify failed), refused (the integration worktree is not clean,
 * a claim was refused), failed (the agent ended with tasks unfinished), stopped (loop stop).
 */
export const UnitPhase = lazySchema(() => z.enum(["planned", "starting", "running", "ready", "merging", "merged", "conflict", "unverified", "refused", "failed", "stopped"]));
export type UnitPhase = z.infer<typeof UnitPhase>;

export const MAX_UNIT_NOTE = 4000;

export const TERMINAL_PHASES: readonly UnitPhase[] = ["merged", "conflict", "unverified", "refused", "failed", "stopped"];

export const LoopUnit = lazySchema(() =>
  z.object({
    id: refName(),
    tasks: z.array(refName()),
    scope: z.array(z.string()),
    after: z.array(refName()),
    phase: UnitPhase,
    /** The agent name that holds the unit's tasks: always unitAgent(loop id, unit id). */
    agent: refName(),
    branch: z.nullable(z.string()),
    worktree: z.nullable(z.string()),
    /** The integration branch's commit the unit started from. */
    base: z.nullable(z.string()),
    pid: z.nullable(z.int()),
    /** The agent process's start time (/proc), so a pid reused by another process is not taken for it. */
    pid_start: z.nullable(z.string()),
    host: z.nullable(z.string()),
    /** How many times an agent was started for it (a restart after a crash counts). */
    starts: count(),
    started_at: z.nullable(isoTime()),
    finished_at: z.nullable(isoTime()),
    /** merging: the commit the integration branch is being moved to, and from. */
    result: z.nullable(z.string()),
    onto: z.nullable(z.string()),
    /** What happened, for people: conflicting paths, the failed check, what was kept. */
    note: z.nullable(boundedText(MAX_UNIT_NOTE)),
    /** Whether its worktree and branch are still there for someone to look at. */
    kept: z.boolean(),
  }),
);
export type LoopUnit = z.infer<typeof LoopUnit>;

export const LoopRecord = lazySchema(() =>
  z.object({
    id: refName(),
    phase: z.enum(["running", "stopping", "stopped", "finished"]),
    integration: z.string().check(z.refine((b) => branchNameProblem(b) === null, "expected a branch name")),
    strategy: z.enum(MERGE_STRATEGIES),
    accept: z.boolean(),
    push: z.boolean(),
    keep: z.boolean(),
    /** Whether it was started with --verify: a resumed run must give a check again. */
    verify: z.boolean(),
    max_worktrees: z.int().check(z.gte(1), z.lte(64)),
    /** The process running the loop. */
    runner: z.object({ pid: z.int(), start: z.nullable(z.string()), host: z.string(), agent: z.string() }),
    started_at: isoTime(),
    updated_at: isoTime(),
    units: z.array(LoopUnit),
  }).check(
    z.refine((r) => r.units.every((u) => u.agent === unitAgent(r.id, u.id)), { message: "a unit's agent is not the loop's own (loop-<loop>-<unit>)", path: ["units"] }),
    z.refine((r) => new Set(r.units.map((u) => u.id)).size === r.units.length, { message: "two units share an id", path: ["units"] }),
  ),
);
export type LoopRecord = z.infer<typeof LoopRecord>;

export function isTerminal(phase: UnitPhase): boolean {
  return TERMINAL_PHASES.includes(phase);
}

export function isLoopActive(r: LoopRecord | null): boolean {
  return !!r && (r.phase === "running" || r.phase === "stopping");
}

/** Whether a unit may start: planned and every unit it waits for is finished. */
export function canStart(r: LoopRecord, u: LoopUnit): boolean {
  return u.phase === "planned" && u.after.every((a) => isTerminal(r.units.find((x) => x.id === a)?.phase ?? "merged"));
}

/** Units merge in plan order: a ready unit waits for every earlier unit to finish. */
export function mayMerge(r: LoopRecord, u: LoopUnit): boolean {
  const i = r.units.indexOf(u);
  return (u.phase === "ready" || u.phase === "merging") && r.units.slice(0, i).every((x) => isTerminal(x.phase));
}
