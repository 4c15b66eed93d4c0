// A model-based property test of the pure core: seeded random walks over a few tasks (some with
// scopes, dependencies, exclusive scopes), three agents and a clock that jumps forward (past
// TTLs and the takeover grace at times), each operation applied through the core as the store
// applies it (support/core-model-ops.ts), every input deep-frozen, and after each step the rules
// of the docs checked (support/core-model-invariants.ts). No git, no processes.
//
//   HANDOFF_FUZZ_SEED=N (or N,M,...)   the walks to run (default: seeds 1..WALKS)
//   HANDOFF_FUZZ_STEPS=N               steps per walk (default 80)
//   HANDOFF_FUZZ_VERBOSE=1             print every step of every walk
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mulberry32 } from "./support/rng.ts";
import { apply, type Config, type Op, type World } from "./support/core-model-ops.ts";
import { deepFreeze, violations } from "./support/core-model-invariants.ts";
import { EMPTY_LEASES } from "../src/core/lease.ts";

const WALKS = 300;
const T0 = Date.parse("2026-11-29T10:00:00.000Z");
const AGENTS = ["ann", "bob", "cy"] as const;
const IDS = ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8"];
const PATTERNS = ["src/a.ts", "src/**", "src/b/*.ts", "docs/*.md", "lib/x.ts", "**/*.ts"];
const SEC = 1000;
const MIN = 60 * SEC;

type Rng = ReturnType<typeof mulberry32>;

function someOf<T>(rng: Rng, xs: readonly T[], max: number): T[] {
  const n = xs.length ? rng.int(max + 1) : 0;
  return [...new Set(Array.from({ length: n }, () => rng.pick(xs)))];
}

function configOf(rng: Rng): Config {
  return {
    graceMs: rng.pick([0, 0, 20 * SEC]),
    capacity: rng.pick([1, 2, Infinity]),
    exclusiveScope: rng.chance(0.3),
    allowSelf: rng.chance(0.5),
    spread: rng.chance(0.5),
  };
}

/** The next operation: mostly on tasks that exist, by any agent, with the clock moving between. */
function nextOp(rng: Rng, w: World): Op {
  const agent = rng.pick(AGENTS);
  const known = [...w.tasks.keys()];
  const id = known.length ? rng.pick(known) : "t1";
  const ttlMs = rng.pick([45 * SEC, 2 * MIN, 5 * MIN]);
  const r = rng.next() * 100;
  if (r < 10 || known.length < 2) {
    const fresh = IDS.find((x) => !w.tasks.has(x));
    if (fresh) {
      return { kind: "create", agent, id: fresh, priority: rng.int(3), scope: someOf(rng, PATTERNS, 2), after: rng.chance(0.4) ? someOf(rng, known, 2) : [], exclusive: rng.chance(0.3), maxAttempts: 1 + rng.int(3) };
    }
  }
  if (r < 22) return { kind: "tick", ms: rng.chance(0.7) ? rng.int(40 * SEC) : rng.chance(0.6) ? 30 * SEC + rng.int(3 * MIN) : 5 * MIN + rng.int(15 * MIN) };
  if (r < 34) return { kind: "claim", agent, id, ttlMs, force: rng.chance(0.15) };
  if (r < 44) return { kind: "claimNext", agent, ttlMs, random: rng.next() };
  if (r < 50) return { kind: "renew", agent, id, ...(rng.chance(0.5) ? { ttlMs } : {}) };
  if (r < 55) return { kind: "release", agent, id };
  if (r < 60) return { kind: "done", agent, id };
  if (r < 62) return { kind: "fail", agent, id };
  if (r < 64) return { kind: "cancel", agent, id };
  if (r < 67) {
    const fence = w.tasks.get(id)?.fence ?? 0;
    return { kind: "reclaim", agent, id, ...(rng.chance(0.5) ? { seen: Math.max(0, fence - rng.int(2)) } : {}) };
  }
  if (r < 70) return { kind: "submit", agent, id, passed: rng.chance(0.7) };
  if (r < 72) return rng.chance(0.5) ? { kind: "workerFinish", agent, id, passed: rng.chance(0.7) } : { kind: "heartbeat", agent };
  if (r < 77) return { kind: rng.chance(0.6) ? "accept" : "reject", agent, id };
  if (r < 87) {
    const task = rng.chance(0.4) ? id : null;
    return { kind: "lease", agent, patterns: someOf(rng, PATTERNS, 2).concat(rng.pick(PATTERNS)), exclusive: rng.chance(0.5), task, ttlMs: rng.pick([30 * SEC, 2 * MIN]) };
  }
  if (r < 91) return { kind: "unlease", agent, patterns: rng.chance(0.3) ? "all" : someOf(rng, PATTERNS, 2).concat(rng.pick(PATTERNS)) };
  if (r < 94) return { kind: "touch", agent };
  return { kind: "depend", agent, id, on: rng.pick(known) };
}

const clock = (now: number) => `+${Math.round((now - T0) / SEC)}s`;

/** One walk; the steps as lines (to replay it) and the first violation found, if any. */
export function walk(seed: number, steps: number, onStep?: (line: string) => void): { log: string[]; problem: string | null; granted: number } {
  const rng = mulberry32(seed);
  const cfg = configOf(rng);
  const log = [`config ${JSON.stringify(cfg)}`];
  let w: World = deepFreeze({ tasks: new Map(), leases: EMPTY_LEASES, now: T0 });
  let granted = 0;
  for (let i = 0; i < steps; i++) {
    const op = nextOp(rng, w);
    let line = `${i}: ${clock(w.now)} ${JSON.stringify(op)}`;
    let r;
    try {
      r = apply(w, cfg, op);
    } catch (e) {
      // A pure function given frozen inputs throws only if it writes to them: a bug either way.
      log.push(line);
      return { log, problem: `step ${i} threw: ${(e as Error).stack}`, granted };
    }
    line += r.ok ? " -> ok" : ` -> ${r.refusal.code}`;
    if (r.ok && (op.kind === "claim" || op.kind === "claimNext")) granted++;
    log.push(line);
    onStep?.(line);
    const next = deepFreeze(r.world);
    const found = violations(w, op, r, cfg, AGENTS);
    if (found.length) return { log, problem: `step ${i}: ${found.join("; ")}`, granted };
    w = next;
  }
  return { log, problem: null, granted };
}

const seedList = process.env.HANDOFF_FUZZ_SEED?.split(",").map((s) => Number(s.trim())) ?? Array.from({ length: WALKS }, (_, i) => i + 1);
const steps = Number(process.env.HANDOFF_FUZZ_STEPS ?? 80);

test(`${seedList.length} random walks of ${steps} steps keep the core's rules`, () => {
  let granted = 0;
  for (const seed of seedList) {
    assert.ok(Number.isInteger(seed), `HANDOFF_FUZZ_SEED must be integers: ${process.env.HANDOFF_FUZZ_SEED}`);
    const verbose = process.env.HANDOFF_FUZZ_VERBOSE === "1";
    const r = walk(seed, steps, verbose ? (l) => process.stderr.write(`[${seed}] ${l}\n`) : undefined);
    granted += r.granted;
    if (r.problem) {
      assert.unreachable(`HANDOFF_FUZZ_SEED=${seed} HANDOFF_FUZZ_STEPS=${steps}: ${r.problem}\n${r.log.map((l) => `  ${l}`).join("\n")}`);
    }
  }
  // The walks must reach the states they are about: claims that go through, not only refusals.
  if (!process.env.HANDOFF_FUZZ_SEED) assert.ok(granted > seedList.length * 3, `only ${granted} claims went through in ${seedList.length} walks`);
});

test.run();
