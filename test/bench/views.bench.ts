// Views over a long history: `status`, `events --agent X --limit 20` and `stats` as whole
// processes against `node -e 0`, measured interleaved in this run, on repositories written in bulk
// (test/support/views-fixture.ts). One-time costs (the event index build, the first merge preview
// of every branch pair, the first record cache) are measured and printed apart from the figures.
// Targets: status <= 2x at 1,000 tasks and <= 3x at 10,000; events <= 1.5x; stats <= 2x. Beside
// them, goal 3's one-shot half: `task list --limit 100` and `ready --limit 10` cost what they return,
// the same at 1,000 and 10,000 tasks, and after a claim moved a ref (the task order file patched).
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { PACK_LOOSE_AT } from "../../src/sync/pack-refs.ts";
import { CLI, cleanEnv, cleanupTemp, tempDir, tempRepo } from "../support/repo.ts";
import { fixtureNow, writeViewsFixture, type ViewsFixture } from "../support/views-fixture.ts";
import { fmt, median } from "./stats.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);
// A private code cache: the bench measures this build, not whichever build last wrote the shared one.
const cache = tempDir("handoff-bench-cache-");
mkdirSync(join(cache, "git-handoff"), { recursive: true });

function time(args: string[], cwd: string, env: NodeJS.ProcessEnv): number {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { cwd, env, stdio: ["ignore", "ignore", "pipe"], maxBuffer: 1 << 28 });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return ms;
}

/** Runs every command once per round, in turn, so machine noise hits them alike; medians. `before`: run first, untimed. */
function interleaved(cmds: { name: string; args: string[]; before?: (round: number) => string[] }[], cwd: string, env: NodeJS.ProcessEnv): Map<string, number> {
  const times = new Map(cmds.map((c) => [c.name, [] as number[]]));
  for (let i = 0; i < ROUNDS; i++) {
    for (const c of cmds) {
      if (c.before) time(c.before(i), cwd, env);
      times.get(c.name)!.push(time(c.args, cwd, env));
    }
  }
  return new Map([...times].map(([k, v]) => [k, median(v)]));
}

let claimer = 0;

function scenario(label: string, f: ViewsFixture, targets: { status: number; events?: number; stats?: number }): void {
  const repo = tempRepo();
  let t = Date.now();
  writeViewsFixture(repo, f);
  console.log(`\n${label}: ${f.tasks.toLocaleString("en")} tasks, ${f.agents} agents (${f.branches} on branches of their own), ${f.events.toLocaleString("en")} events; written in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  const env = cleanEnv({ HANDOFF_AGENT: "agent-000", HANDOFF_NOW: fixtureNow(f), XDG_CACHE_HOME: cache });
  const once = (args: string[]) => time([CLI, ...args], repo, env);
  t = Date.now();
  const firstEvents = once(["events", "--agent", "agent-007", "--limit", "20"]);
  const firstStatus = once(["status"]);
  console.log(`one-time: event index build ${fmt(firstEvents / 1000, 1)} s (first events call); first status ${fmt(firstStatus / 1000, 1)} s (merges every branch pair, caches the records)`);
  spawnSync(process.execPath, ["-e", "0"]);
  const cmds = [
    { name: "node", args: ["-e", "0"] },
    { name: "status", args: [CLI, "status"] },
    ...(targets.events ? [{ name: "events", args: [CLI, "events", "--agent", "agent-007", "--limit", "20"] }] : []),
    ...(targets.stats ? [{ name: "stats", args: [CLI, "stats"] }] : []),
    { name: "list", args: [CLI, "task", "list", "--limit", "100"] },
    { name: "ready", args: [CLI, "ready", "--limit", "10"] },
  ];
  const m = interleaved(cmds, repo, env);
  const show = (times: Map<string, number>, title: string) => {
    const base = times.get("node")!;
    console.log(`  ${title}`);
    console.log(`  ${"node -e 0".padEnd(44)} ${fmt(base, 1).padStart(8)} ms`);
    for (const [name, what, target] of [["status", "git handoff status", targets.status], ["events", "git handoff events --agent X --limit 20", targets.events], ["stats", "git handoff stats", targets.stats]] as const) {
      const ms = times.get(name);
      if (ms !== undefined && target !== undefined) console.log(`  ${what.padEnd(44)} ${fmt(ms, 1).padStart(8)} ms  ${fmt(ms / base)}x node -e 0 (target <= ${target}x)`);
    }
    for (const [name, what] of [["list", "git handoff task list --limit 100"], ["ready", "git handoff ready --limit 10"], ["list after a claim", "the same list after a claim"]] as const) {
      const ms = times.get(name);
      if (ms !== undefined) console.log(`  ${what.padEnd(44)} ${fmt(ms, 1).padStart(8)} ms  ${fmt(ms / base)}x node -e 0 (goal 3: as at 1,000 tasks)`);
    }
  };
  // The fixture writes one loose file per ref; the first view above packed them (view-packing.ts).
  show(m, `refs as the views leave them (the first view packed the ${f.tasks.toLocaleString("en")}+ loose refs it found)`);
  // The worst case between two packs: just under the threshold of loose refs, rewritten by writes.
  // A few under the threshold: the views' own writes (the caller's heartbeat) must not make them pack.
  const loose = unpack(repo, PACK_LOOSE_AT - 16);
  const between = interleaved(cmds, repo, env);
  show(between, `with ${loose} loose task refs (about the most a clone keeps between packs; ${looseLeft(repo)} still loose after the rounds)`);
  spawnSync("git", ["pack-refs", "--all"], { cwd: repo });
  show(interleaved(cmds, repo, env), "refs packed (git pack-refs --all, as after git gc)");
  // Apart (a claim moves a task ref, so every view above would start over): a claim by an agent of
  // its own first, untimed, then the listing, which patches the task order file.
  const afterClaim = [
    { name: "node", args: ["-e", "0"] },
    { name: "list after a claim", args: [CLI, "task", "list", "--limit", "100"], before: () => [CLI, "claim", "--next", "--agent", `bench-claimer-${claimer++}`] },
  ];
  show(interleaved(afterClaim, repo, env), "a listing right after a claim (each round: one claim, untimed)");
}

function looseLeft(repo: string): number {
  const r = spawnSync("find", [join(repo, ".git/refs/handoff"), "-type", "f"], { encoding: "utf8" });
  return r.stdout.split("\n").filter(Boolean).length;
}

/** Writes `n` packed task refs back as loose files of the same value, as writes since a pack leave them. */
function unpack(repo: string, n: number): number {
  const packed = readFileSync(join(repo, ".git/packed-refs"), "utf8").split("\n");
  let done = 0;
  for (const line of packed) {
    const [oid, name] = line.split(" ");
    if (done >= n || !name?.startsWith("refs/handoff/tasks/") || !oid) continue;
    const path = join(repo, ".git", name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${oid}\n`);
    done++;
  }
  return done;
}

scenario("views at 1,000 tasks", { tasks: 1000, agents: 100, events: 100_000, branches: 30 }, { status: 2, events: 1.5, stats: 2 });
if (!process.env.BENCH_QUICK) scenario("views at 10,000 tasks", { tasks: 10_000, agents: 100, events: 100_000, branches: 30 }, { status: 3 });
cleanupTemp();
