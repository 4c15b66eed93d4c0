// Benchmark: the soak at full size. 10 clones of one remote over smart HTTP (git http-backend),
// 3 agents each (a process apiece), 300 tasks, every agent looping claim --next -> done -> sync
// until none is left, on a scripted clock near the real time.
//   npm run build && node --import tsx test/bench/soak.bench.ts [clones] [agents] [tasks] [bound-minutes]
// Reports grants per second, claim p50/p99 against an uncontended claim (one agent alone, same
// path), push attempts, ls-remotes and fetches per grant, each clone's share against a fair one,
// pushes the remote received per minute, and the ref advertisement size at the end.
import { spawnSync } from "node:child_process";
import { cleanupTemp, cleanEnv } from "../support/repo.ts";
import { quantile, runSoak, soakFigures } from "../support/soak.ts";

const CLONES = Number(process.argv[2] ?? 10);
const AGENTS = Number(process.argv[3] ?? 3);
const TASKS = Number(process.argv[4] ?? 300);
const BOUND_MS = Number(process.argv[5] ?? 15) * 60_000;

const now = () => new Date(Date.now() + 10_000).toISOString();
try {
  // The uncontended claim: one agent alone, the same loop and the same path.
  const alone = await runSoak({ clones: 1, agentsPerClone: 1, tasks: 12, now: now(), boundMs: 5 * 60_000 });
  const uncontended = quantile(alone.grants.map((g) => g.ms), 0.5);
  await alone.stop();

  // BENCH_LAYOUT=separate: every clone keeps its coordination refs in a separate store.
  const r = await runSoak({ clones: CLONES, agentsPerClone: AGENTS, tasks: TASKS, now: now(), boundMs: BOUND_MS, ...(process.env.BENCH_LAYOUT === "separate" ? { separate: CLONES } : {}) });
  const f = soakFigures(r, CLONES);
  const landed = r.requests.filter((l) => l.startsWith("POST ") && l.includes("git-receive-pack")).length;
  const advert = spawnSync("git", ["ls-remote", r.bare], { env: cleanEnv(), encoding: "utf8" }).stdout.length;
  await r.stop();
  const fair = f.grants / CLONES;
  const minutes = r.wallMs / 60_000;
  console.log(`\nsoak: ${CLONES} clones x ${AGENTS} agents, ${TASKS} tasks, smart HTTP (git http-backend); ${f.grants} granted in ${(r.wallMs / 1000).toFixed(0)} s`);
  console.log(`  grants per second                               ${f.grantsPerSecond.toFixed(2)}   (${(f.grantsPerSecond / 0.28).toFixed(1)}x the 0.28/s measured before on a loaded machine; goal >= 10x)`);
  console.log(`  claim p50 / uncontended claim                   ${(f.claimP50 / uncontended).toFixed(1)}x`);
  console.log(`  claim p99 / uncontended claim                   ${(f.claimP99 / uncontended).toFixed(1)}x   (goal <= 20x)`);
  // The goal counts a claim's push attempts (the one that lands plus those its lost races cost), as
  // the finding did (16.7 per grant, 15.7 of them rejected); the done's push, carried by the
  // agent's sync, is one more per grant whatever the contention.
  console.log(`  claim push attempts per grant                   ${f.claimPushesPerGrant.toFixed(2)}   (goal <= 2; max ${f.maxClaimPushes} for one claim)`);
  console.log(`  all push attempts per grant (claim, sync)       ${f.pushesPerGrant.toFixed(2)}   (at least 2: the claim and the done)`);
  console.log(`  ls-remotes per grant                            ${f.lsRemotesPerGrant.toFixed(2)}`);
  console.log(`  fetches per grant                               ${f.fetchesPerGrant.toFixed(2)}`);
  console.log(`  least clone share / fair share                  ${(Math.min(...f.perClone) / fair).toFixed(2)}   (goal >= 0.5; per clone ${f.perClone.join(" ")})`);
  console.log(`  pushes the remote received per minute           ${(landed / minutes).toFixed(1)}   (push connections ${(f.remotePushRequests / minutes).toFixed(1)}/min)`);
  console.log(`  ref advertisement at the end                    ${(advert / 1024).toFixed(1)} KB (git ls-remote output, ${TASKS} tasks)`);
  console.log(`  errors                                          ${f.errors.length}${f.errors.length ? ` (${[...new Set(f.errors.map((e) => e.code))].join(", ")})` : ""}`);
  for (const e of [...new Map(f.hardErrors.map((x) => [x.code, x])).values()]) console.log(`  first ${e.code}: ${(e.message ?? "").slice(0, 300)}`);
  console.log(`\nraw, ms (reference only): uncontended ${uncontended.toFixed(0)}, p50 ${f.claimP50.toFixed(0)}, p99 ${f.claimP99.toFixed(0)}`);
} finally {
  cleanupTemp();
}
