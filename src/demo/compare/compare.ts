// `npm run compare`: the same workload, the same scripted agents, twice: with git-handoff and with
// plain git worktrees. Prints the two columns side by side (or --json), figures recounted from git.
import type { Stats } from "../../core/stats.ts";
import { measure, type Figures } from "./measure.ts";
import { runCoordinated } from "./coordinated.ts";
import { runUncoordinated } from "./uncoordinated.ts";
import { workload } from "./workload.ts";
import type { World } from "./world.ts";

export interface CompareOptions {
  agents: number;
  tasks: number;
  seed: number;
  keep?: boolean;
  progress?: (line: string) => void;
}

export interface CompareResult {
  options: { agents: number; tasks: number; seed: number };
  with: Figures;
  without: Figures;
  /** `git handoff stats --json` of the coordinated run: what the tool itself counted. */
  stats: unknown;
  repos: { with: string; without: string } | null;
}

export function compare(o: CompareOptions): CompareResult {
  const tasks = workload(o.tasks);
  const opts = { agents: o.agents, seed: o.seed, tasks, keep: !!o.keep };
  const one = (label: string, run: () => World, stats = false): { world: World; figures: Figures; stats: unknown } => {
    o.progress?.(`${label}: ${o.agents} agents, ${o.tasks} tasks ...`);
    const t0 = performance.now();
    const world = run();
    const wall = performance.now() - t0;
    try {
      const figures = measure(world, tasks, wall);
      return { world, figures, stats: stats ? JSON.parse(world.box.handoff(null, ["stats", "--json"]).stdout) : null };
    } finally {
      world.remove();
    }
  };
  const without = one("without git-handoff", () => runUncoordinated(opts));
  const withIt = one("with git-handoff", () => runCoordinated(opts), true);
  return {
    options: { agents: o.agents, tasks: o.tasks, seed: o.seed },
    with: withIt.figures,
    without: without.figures,
    stats: withIt.stats,
    repos: o.keep ? { with: withIt.world.repo, without: without.world.repo } : null,
  };
}

const ROWS: [keyof Figures, string][] = [
  ["tasks_merged", "tasks merged into main"],
  ["tasks_done_twice", "tasks done twice"],
  ["owned_file_edits", "edits of files another agent owned"],
  ["integration_conflicts", "merge conflicts at integration"],
  ["dependent_work_redone", "dependent work started early, redone"],
  ["handoffs_delivered", "handoffs that arrived"],
  ["handoff_deliveries", "handoff deliveries (acks)"],
  ["verification_failures_before_merge", "verification failures before merge"],
  ["verification_failures_after_merge", "verification failures after merge"],
  ["scripted_minutes", "scripted minutes to finish"],
  ["agent_minutes_waiting", "agent-minutes waiting"],
  ["coordination_calls", "git-handoff calls"],
  ["coordination_ms", "ms spent in git-handoff calls"],
  ["wall_ms", "wall ms of the whole run"],
];

export function reportText(r: CompareResult): string {
  const w = Math.max(...ROWS.map(([, l]) => l.length));
  const head = `${"".padEnd(w)}  ${"without".padStart(9)}  ${"with".padStart(9)}  ${"difference".padStart(10)}`;
  const lines = ROWS.map(([k, label]) => {
    const a = r.without[k];
    const b = r.with[k];
    const d = b - a;
    return `${label.padEnd(w)}  ${String(a).padStart(9)}  ${String(b).padStart(9)}  ${(d > 0 ? `+${d}` : String(d)).padStart(10)}`;
  });
  const st = r.stats as Stats | null;
  const tail = st
    ? [
        "",
        "git handoff stats of the run with it:",
        `  claims granted ${st.claims.granted}, refused as duplicates ${st.claims.refused_duplicate}, refused while blocked ${st.claims.refused_blocked}`,
        `  handoffs delivered ${st.handoffs.delivered}, acknowledged ${st.handoffs.acknowledged}; tasks blocked on a dependency ${st.blocked.tasks}`,
        `  verifications passed ${st.review.verified_passed}, failed ${st.review.verified_failed}; reviews accepted ${st.review.accepted}`,
      ]
    : [];
  return [`${r.options.agents} agents, ${r.options.tasks} tasks, seed ${r.options.seed} (figures recounted from each run's git history)`, "", head, ...lines, ...tail].join("\n");
}
