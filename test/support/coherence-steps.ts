// Test support for the cache-coherence differential test: the steps of a walk (what agents, a
// second clone and a user behind our back do) and the reads compared after each, chosen at random
// from the walk's seeded generator, and each step's shell line for a failure's report.
import type { mulberry32 } from "./rng.ts";
import type { World } from "./coherence-world.ts";
import { TASKS_CACHE_FORMAT } from "../../src/store/record-cache.ts";
import { LEASE_CACHE_FORMAT } from "../../src/store/lease-cache-file.ts";

/** A step: what a user or agent does, as the shell line that reproduces it. */
export type Op =
  | { k: "cli"; clone: "A" | "B"; agent: string; args: string[] }
  | { k: "mcp"; tool: string; args: Record<string, unknown>; cli: string[] }
  | { k: "git"; args: string[] }
  | { k: "policy"; yaml: string }
  | { k: "rmcache"; names: string[] }
  | { k: "time"; minutes: number }
  | { k: "mcp-restart" };

export interface Read {
  args: string[];
  agent: string;
  /** The clock of the read (default: the walk's). */
  at?: number;
}

const AGENTS = ["a", "b", "c"];
const FILES = ["src/a/x.ts", "src/a/y.ts", "src/b/z.ts", "docs/r.md", "lib/q.js", "README.md"];
export const GLOBS = ["src/a/**", "src/b/**", "src/**", "docs/*.md", "lib/q.js", "README.md", "src/a/x.ts"];
const POLICIES = [
  "max_concurrent: 1\n",
  "max_concurrent: 2\nclaim_ttl: 20m\n",
  "max_concurrent: 3\nlease_ttl: 10m\n",
  "mode: strict\nmax_concurrent: 2\n",
  "mode: advisory\nexclusive_scope: true\n",
  "claim_ttl: 45m\nlease_ttl: 15m\nmax_concurrent: 1\n",
];
export const q = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The shell line of an op, as a person would type it to reproduce the step. */
export function describe(op: Op, w: World): string {
  const at = `HANDOFF_NOW=${w.iso}`;
  switch (op.k) {
    case "cli":
      return `(cd ${op.clone} && ${at} HANDOFF_AGENT=${op.agent} git handoff ${op.args.map(q).join(" ")})`;
    case "mcp":
      return `[mcp server in A, agent m, started with HANDOFF_NOW=${new Date(w.mcpNow).toISOString()}] ${op.tool} ${JSON.stringify(op.args)}   (one-shot equivalent: HANDOFF_AGENT=m git handoff ${op.cli.map(q).join(" ")})`;
    case "git":
      return `git -C A ${op.args.map(q).join(" ")}`;
    case "policy":
      return `(cd A && printf ${q(op.yaml)} > .handoff.yaml && git add .handoff.yaml && git commit -m policy)`;
    case "rmcache":
      return `rm -rf ${op.names.map((n) => `A/.git/handoff/${n}`).join(" ")}`;
    case "time":
      return `# time moves ${op.minutes}m: HANDOFF_NOW=${new Date(w.now + op.minutes * 60_000).toISOString()} from here (mcp server restarted)`;
    case "mcp-restart":
      return `# restart the mcp server`;
  }
}

/**
 * Comparisons that meet a discrepancy already reported and left as it is (HANDOFF_FUZZ_KNOWN=all,
 * or a comma list, puts them back): `key-order` (JSON compared as printed: a record cached as its
 * writer built it keeps that key order, one read from git the schema's; the values are the same).
 * Fixed since, and always in the walk: origin/HEAD moved after the policy was cached
 * (repo-policy.ts), `stats` read while events share their instant (stats.ts).
 */
export const known = (name: string) => {
  const v = process.env.HANDOFF_FUZZ_KNOWN ?? "";
  return v === "all" || v.split(",").includes(name);
};

/** Picks the next step from the state of the walk. */
export function nextOp(w: World, rnd: ReturnType<typeof mulberry32>): Op {
  const agent = rnd.pick(AGENTS);
  const live = w.tasks;
  const anyTask = () => (live.length ? rnd.pick(live) : "t0");
  const roll = rnd.int(100);
  if (roll < 14 || live.length < 2) {
    const id = `t${w.taskN++}`;
    const args = ["task", "add", `objective of ${id}`, "--id", id];
    if (rnd.chance(0.6)) args.push("--priority", String(rnd.int(4)));
    if (rnd.chance(0.5)) args.push("--scope", rnd.pick(GLOBS));
    if (rnd.chance(0.15)) args.push("--scope", rnd.pick(GLOBS));
    if (rnd.chance(0.15)) args.push("--exclusive");
    if (live.length && rnd.chance(0.3)) args.push("--after", anyTask());
    if (w.useMcp && rnd.chance(0.25)) {
      const a: Record<string, unknown> = { objective: `objective of ${id}`, id };
      const pi = args.indexOf("--priority");
      if (pi > 0) a.priority = Number(args[pi + 1]);
      const scope = args.flatMap((x, i) => (args[i - 1] === "--scope" ? [x] : []));
      if (scope.length) a.scope = scope;
      if (args.includes("--exclusive")) a.exclusive = true;
      const ai = args.indexOf("--after");
      if (ai > 0) a.after = [args[ai + 1]];
      return { k: "mcp", tool: "create_task", args: a, cli: args };
    }
    return { k: "cli", clone: "A", agent, args };
  }
  if (roll < 26) {
    const id = anyTask();
    const args = ["claim", id, "--json"];
    if (rnd.chance(0.3)) args.push("--ttl", rnd.pick(["5m", "20m", "1h"]));
    if (rnd.chance(0.1)) args.push("--over-capacity");
    if (w.useMcp && rnd.chance(0.25)) return { k: "mcp", tool: "claim_task", args: { id }, cli: ["claim", id, "--json"] };
    return { k: "cli", clone: "A", agent, args };
  }
  if (roll < 33) {
    if (w.useMcp && rnd.chance(0.3)) return { k: "mcp", tool: "claim_next", args: {}, cli: ["claim", "--next", "--json"] };
    return { k: "cli", clone: "A", agent, args: rnd.chance(0.5) ? ["claim", "--next", "--json"] : ["ready", "--claim", "--json"] };
  }
  if (roll < 39) {
    const id = anyTask();
    if (w.useMcp && rnd.chance(0.3)) return { k: "mcp", tool: "release_task", args: { id }, cli: ["release", id, "--json"] };
    return { k: "cli", clone: "A", agent, args: ["release", id, "--json"] };
  }
  if (roll < 46) {
    const id = anyTask();
    if (w.useMcp && rnd.chance(0.3)) return { k: "mcp", tool: "complete_task", args: { id }, cli: ["done", id, "--json"] };
    return { k: "cli", clone: "A", agent, args: ["done", id, "--json"] };
  }
  if (roll < 49) return { k: "cli", clone: "A", agent, args: ["renew", anyTask(), "--ttl", rnd.pick(["10m", "40m"]), "--json"] };
  if (roll < 51) return { k: "cli", clone: "A", agent, args: [rnd.pick(["cancel", "fail"]), anyTask(), "--json", ...(rnd.chance(0.5) ? [] : [])] };
  if (roll < 58) {
    const paths = [rnd.pick([...FILES, ...GLOBS])];
    if (rnd.chance(0.08)) for (let i = 0; i < 70; i++) paths.push(`gen/f${i}/x${rnd.int(3)}.ts`);
    const args = ["lease", ...paths, "--json"];
    if (rnd.chance(0.3)) args.push("--exclusive");
    if (rnd.chance(0.3)) args.push("--ttl", rnd.pick(["5m", "45m"]));
    if (w.useMcp && rnd.chance(0.2)) return { k: "mcp", tool: "lease_files", args: { paths }, cli: ["lease", ...paths, "--json"] };
    return { k: "cli", clone: "A", agent, args };
  }
  if (roll < 62) {
    if (rnd.chance(0.4)) return { k: "cli", clone: "A", agent, args: ["unlease", "--all", "--json"] };
    return { k: "cli", clone: "A", agent, args: ["unlease", rnd.pick([...FILES, ...GLOBS]), "--json"] };
  }
  if (roll < 65) {
    const [x, y] = [anyTask(), anyTask()];
    return { k: "cli", clone: "A", agent, args: rnd.chance(0.7) ? ["depend", x, "--on", y, "--json"] : ["undepend", x, "--on", y, "--json"] };
  }
  if (roll < 68) {
    return { k: "cli", clone: "A", agent, args: rnd.chance(0.7) ? ["session", "start", "--objective", `work of ${agent}`, "--files", rnd.pick(GLOBS), ...(rnd.chance(0.4) ? ["--capacity", String(1 + rnd.int(3))] : []), "--json"] : ["session", "end", "--json"] };
  }
  if (roll < 71) return { k: "git", args: ["pack-refs", "--all"] };
  if (roll < 73) return { k: "git", args: rnd.chance(0.5) ? ["gc", "-q", "--prune=now"] : ["repack", "-q", "-a", "-d"] };
  if (roll < 75 && live.length) {
    const id = anyTask();
    const h = w.history.get(id) ?? [];
    if (h.length >= 2 && rnd.chance(0.7)) return { k: "git", args: ["update-ref", `refs/handoff/tasks/${id}`, h[rnd.int(h.length - 1)]!] };
    return { k: "git", args: ["update-ref", "-d", `refs/handoff/tasks/${id}`] };
  }
  if (roll < 76) {
    const h = w.history.get("(leases)") ?? [];
    if (h.length >= 2 && rnd.chance(0.8)) return { k: "git", args: ["update-ref", "refs/handoff/leases", h[rnd.int(h.length - 1)]!] };
    return { k: "git", args: ["update-ref", "-d", "refs/handoff/leases"] };
  }
  if (roll < 78) {
    if (w.remote && rnd.chance(0.5)) return { k: "git", args: ["remote", "set-head", "origin", ...(rnd.chance(0.7) ? [rnd.pick(["dev", "main"])] : ["-d"])] };
    return { k: "policy", yaml: rnd.pick(POLICIES) };
  }
  if (roll < 80) {
    const names = [`tasks-${TASKS_CACHE_FORMAT}.cache`, "claimed.index", "claimed.packed", `leases-${LEASE_CACHE_FORMAT}.cache`, "policy.cache", "task-order.json", "records.json", "view-listing.json", "events", "log-index.json"];
    return { k: "rmcache", names: [rnd.pick(names), ...(rnd.chance(0.3) ? [rnd.pick(names)] : [])] };
  }
  if (roll < 84) return { k: "time", minutes: rnd.pick([3, 11, 25, 31, 50, 70]) };
  if (roll < 90 && w.remote) {
    // The second clone: a write there and its sync, or a sync of A.
    if (rnd.chance(0.4)) return { k: "cli", clone: "A", agent, args: ["sync", "--json"] };
    if (rnd.chance(0.4)) {
      const id = `t${w.taskN++}`;
      return { k: "cli", clone: "B", agent: "bee", args: ["task", "add", `made in B ${id}`, "--id", id, "--priority", String(rnd.int(4)), ...(rnd.chance(0.5) ? ["--scope", rnd.pick(GLOBS)] : [])] };
    }
    if (rnd.chance(0.5)) return { k: "cli", clone: "B", agent: "bee", args: ["claim", live.length ? anyTask() : "t0", "--json"] };
    return { k: "cli", clone: "B", agent: "bee", args: ["sync", "--json"] };
  }
  if (roll < 91) return { k: "cli", clone: "A", agent, args: ["reclaim", anyTask(), "--reason", "fuzz", "--json"] };
  if (roll < 93) {
    const other = rnd.pick(AGENTS.filter((x) => x !== agent));
    if (rnd.chance(0.5)) return { k: "cli", clone: "A", agent, args: ["ask", other, "--release", rnd.chance(0.6) ? anyTask() : rnd.pick(FILES), "--reason", "fuzz", "--json"] };
    return { k: "cli", clone: "A", agent, args: ["handoff", anyTask(), "--to", other, "--note", "fuzz", "--json"] };
  }
  if (w.useMcp && roll < 96) {
    const path = rnd.pick(FILES);
    return { k: "mcp", tool: "release_files", args: { paths: [path] }, cli: ["unlease", path, "--json"] };
  }
  return { k: "cli", clone: "A", agent, args: ["claim", anyTask(), "--json", "--force"] };
}

/** The reads made after a step, chosen at random from the menu (always the listing). */
export function pickReads(w: World, rnd: ReturnType<typeof mulberry32>, n: number): Read[] {
  const id = () => (w.tasks.length ? rnd.pick(w.tasks) : "t0");
  const agent = () => rnd.pick(AGENTS);
  const menu: (() => Read)[] = [
    () => ({ args: ["task", "list", "--json", "--limit", String(1 + rnd.int(4))], agent: "r" }),
    () => ({ args: ["task", "list", "--json", "--status", rnd.pick(["todo", "claimed", "done", "blocked", "failed", "cancelled"])], agent: "r" }),
    () => ({ args: ["task", "list", "--json", "--status", rnd.pick(["todo", "done"]), "--limit", String(1 + rnd.int(3))], agent: "r" }),
    () => ({ args: ["ready", "--json"], agent: agent() }),
    () => ({ args: ["ready", "--json", "--limit", String(1 + rnd.int(3))], agent: agent() }),
    () => ({ args: ["status", "--json", "--no-conflicts"], agent: agent() }),
    () => ({ args: ["status", "--json", "--all", "--no-conflicts"], agent: agent() }),
    () => ({ args: ["status", "--no-conflicts"], agent: agent() }),
    () => ({ args: ["leases", "--json"], agent: "r" }),
    () => ({ args: ["leases", "--json", "--agent", agent()], agent: "r" }),
    () => ({ args: ["check", rnd.pick(FILES), rnd.pick(FILES), "--json"], agent: agent() }),
    () => ({ args: ["task", "show", id(), "--json"], agent: "r" }),
    () => ({ args: ["events", "--json", "--limit", String(1 + rnd.int(8))], agent: "r" }),
    () => ({ args: ["events", "--json", "--agent", agent(), "--limit", String(1 + rnd.int(6))], agent: "r" }),
    () => ({ args: ["events", "--json", "--task", id()], agent: "r" }),
    () => ({ args: ["events", "--json", "--type", rnd.pick(["claimed", "expired", "leased", "done", "released"])], agent: "r" }),
    // Events at the same instant (every step at one time: HANDOFF_FUZZ_TICK=0) count differently in
    // `stats` by whether the event index was built before or after them (reported apart).
    () => ({ args: ["stats", "--json"], agent: agent() }),
    // A window reads the times stats only counts from the index's counted.jsonl (without one, their
    // number from its manifest): a start among the walk's last steps.
    () => ({ args: ["stats", "--json", "--since", new Date(w.now - rnd.int(20) * 1000).toISOString()], agent: agent() }),
    () => ({ args: ["agents", "--json"], agent: "r" }),
    () => ({ args: ["inbox", "--json"], agent: agent() }),
    () => ({ args: ["task", "list"], agent: "r" }),
  ];
  const reads: Read[] = [{ args: ["task", "list", "--json"], agent: "r" }];
  for (let i = 0; i < n; i++) reads.push(rnd.pick(menu)());
  return reads;
}

