// Benchmark: claims and syncs through a remote, against a local bare repo (by path) and smart HTTP
// (git http-backend), in the same run, as ratios to what git itself needs.
//   npm run build && node --import tsx test/bench/sync.bench.ts [iterations]
// - claim floor: a plain `git fetch` of one ref plus a `git push` of one ref (what a claim through
//   a remote needs at least); ratio = `git handoff claim` / floor (target <= 1.3x).
// - sync with nothing new, 1,000 live tasks on the remote: ratio to `node -e 0` + one
//   `git ls-remote` of refs/handoff/* (target <= 1.3x), and to the listing alone with and without
//   the CLI's own start-up (a `git handoff remote` call).
// - the claim against the floor plus Node's start-up (`node -e 0`): what a one-shot claim cannot avoid.
import { spawnSync } from "node:child_process";
import { performance } from "node:perf_hooks";
import { addTask } from "../../src/store/task-store.ts";
import { openSyncedStore as openStore } from "../../src/sync/open.ts";
import { CLI, cleanEnv, cleanupTemp, gitOut, tempRepo } from "../support/repo.ts";
import { cloneOf, serveRoot, startHttp } from "../support/servers.ts";

const N = Number(process.argv[2] ?? 15);
const LIVE = 1000;

function time(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): number {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { cwd, env: cleanEnv(env), encoding: "utf8" });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed: ${r.stderr}`);
  return ms;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const handoff = (args: string[], cwd: string, agent = "bench") => time(process.execPath, [CLI, ...args], cwd, { HANDOFF_AGENT: agent });

async function seed(bare: string): Promise<void> {
  const seedRepo = tempRepo();
  gitOut(seedRepo, "remote", "add", "origin", bare);
  gitOut(seedRepo, "push", "-q", "origin", "main");
  const store = await openStore({ cwd: seedRepo, agent: "seed" });
  for (let i = 0; i < LIVE; i++) await addTask(store, { id: `live-${i}`, objective: `task ${i}`, priority: 0, scope: [], maxAttempts: 3 });
  store.close();
  handoff(["sync"], seedRepo);
}

function measure(label: string, url: string, offset: number): Record<string, number> {
  const clone = cloneOf(url);
  handoff(["sync"], clone); // the clone mirrors the remote's 1,000 tasks
  const head = gitOut(clone, "rev-parse", "HEAD");
  const tree = gitOut(clone, "rev-parse", "HEAD^{tree}");
  const floor: number[] = [];
  const claim: number[] = [];
  const lsRemote: number[] = [];
  const sync: number[] = [];
  const cliFloor: number[] = [];
  const node: number[] = [];
  for (let i = 0; i < N; i++) {
    // Interleaved, so load on the machine hits both sides alike.
    const commit = gitOut(clone, "commit-tree", tree, "-p", head, "-m", `bench ${label} ${i}`);
    floor.push(
      time("git", ["fetch", "-q", "--no-tags", "--no-write-fetch-head", "origin", `+refs/handoff/tasks/live-${i}:refs/bench-fetch/live-${i}`], clone) +
        time("git", ["push", "-q", "origin", `${commit}:refs/bench/${label}-${i}`], clone),
    );
    claim.push(handoff(["claim", `live-${offset + i}`], clone, `agent-${label}-${i}`));
    lsRemote.push(time("git", ["ls-remote", "origin", "refs/handoff/*"], clone));
    handoff(["sync"], clone);
    sync.push(handoff(["sync"], clone)); // nothing new since the sync just before
    cliFloor.push(handoff(["remote"], clone));
    node.push(time(process.execPath, ["-e", "0"], clone));
  }
  const f = median(floor), c = median(claim), l = median(lsRemote), s = median(sync), n = median(cliFloor), z = median(node);
  console.log(`\n${label} (${url.startsWith("http") ? "smart HTTP" : "bare repo by path"}, ${LIVE} live tasks, median of ${N})`);
  console.log(`  claim through the remote / (git fetch 1 ref + git push 1 ref)   ${(c / f).toFixed(2)}x   (target <= 1.3x)`);
  console.log(`  claim / (claim floor + node -e 0)                               ${(c / (f + z)).toFixed(2)}x`);
  console.log(`  claim minus CLI start-up / claim floor                           ${((c - n) / f).toFixed(2)}x   (the claim's own git work)`);
  console.log(`  sync, nothing new / (node -e 0 + git ls-remote refs/handoff/*)   ${(s / (z + l)).toFixed(2)}x   (target <= 1.3x)`);
  console.log(`  sync, nothing new / git ls-remote refs/handoff/*                 ${(s / l).toFixed(2)}x`);
  console.log(`  sync minus CLI start-up / git ls-remote refs/handoff/*           ${((s - n) / l).toFixed(2)}x   (about one round trip)`);
  console.log(`  CLI start-up (git handoff remote) / claim floor                  ${(n / f).toFixed(2)}x`);
  return { floor: f, claim: c, lsRemote: l, sync: s, cliFloor: n, node: z };
}

const served = serveRoot();
const bare = served.bare("bench");
const http = await startHttp(served.root);
try {
  await seed(bare);
  const local = measure("local", bare, 0);
  const viaHttp = measure("http", http.url("bench"), 500);
  console.log(`\nraw medians, ms (for reference only): ${JSON.stringify({ local, http: viaHttp }, (_k, v) => (typeof v === "number" ? Math.round(v) : v))}`);
} finally {
  await http.stop();
  cleanupTemp();
}
