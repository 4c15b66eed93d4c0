// Test support for the cache-coherence differential test (test/cache-coherence.test.ts): a seeded
// walk, each write made again in the cache-free truth and the refs it leaves compared, then a
// random choice of reads (and the mcp server's listings) compared with the truth's answers.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv } from "./repo.ts";
import { mulberry32 } from "./rng.ts";
import { GIT_ID, T0, World, git, runSync, stripCaches, type Run } from "./coherence-world.ts";
import { GLOBS, describe, known, nextOp, pickReads, q, type Op, type Read } from "./coherence-steps.ts";
import { tasksCacheFile } from "../../src/store/record-cache.ts";

export interface Finding {
  seed: number;
  step: number;
  what: string;
  a: string;
  t: string;
}

/** What legitimately differs between A and its copy: only the copy's path. */
export function normalise(text: string, w: World): string {
  return text.split(w.T).join(w.A).split(w.Rt).join(w.R).split(w.xdgT).join(w.xdgA);
}

/**
 * A JSON answer's object keys sorted (arrays keep their order): a record read from a cache keeps
 * the key order it was written in, one read from git comes out in the schema's order (reported
 * apart; HANDOFF_FUZZ_KNOWN=key-order compares the text as printed).
 */
function sortedKeys(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(sortedKeys);
  if (x && typeof x === "object") return Object.fromEntries(Object.keys(x).sort().map((k) => [k, sortedKeys((x as Record<string, unknown>)[k])]));
  return x;
}

function jsonText(text: string): string {
  if (known("key-order")) return text;
  const t = text.trim();
  if (!t.startsWith("{") && !t.startsWith("[")) return text;
  try {
    return JSON.stringify(sortedKeys(JSON.parse(t)), null, 2) + "\n";
  } catch {
    return text;
  }
}

export const show = (r: Run) => `exit ${r.code}\n--- stdout\n${jsonText(r.stdout)}--- stderr\n${jsonText(r.stderr)}`;

export interface WalkOptions {
  steps: number;
  reads: number;
  mcp: boolean;
  /**
   * Tasks added in process before the walk (bulk-0000...), so the listing files written only past
   * 500 tasks (task-order.json, view-listing.json, listing-*.json) are in play.
   */
  bulk?: number;
  /** A sync remote and a second clone (default: odd seeds). */
  remote?: boolean;
  /** Milliseconds the clock moves at each step (0: every step at the same time, until a time step). */
  tick: number;
  /** Called after each step (the bench loop prints progress). */
  onStep?: (i: number, line: string) => void;
}

export interface WalkResult {
  /** The folder of the walk's repositories (kept after a failure with HANDOFF_FUZZ_KEEP=1). */
  root: string;
  findings: Finding[];
  log: string[];
  calls: number;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const canon = (x: unknown) => JSON.stringify(known("key-order") ? x : sortedKeys(x), null, 1);

/**
 * One seeded walk. Stops at the first step with a finding (the rest of the walk would only repeat
 * it): the finding names the step, and `log` holds every step's shell line up to it.
 */
export async function walk(seed: number, o: WalkOptions): Promise<WalkResult> {
  const rnd = mulberry32(seed);
  const w = new World(seed, o.mcp, o.remote ?? seed % 2 === 1);
  w.tick = o.tick;
  const findings: Finding[] = [];
  let calls = 0;
  const find = (step: number, what: string, a: string, t: string) => findings.push({ seed, step, what, a, t });
  try {
    if (o.bulk) await addBulk(w, o.bulk);
    await w.startMcp();
    for (let i = 0; i < o.steps && !findings.length; i++) {
      w.now += w.tick;
      const op = nextOp(w, rnd);
      const line = describe(op, w);
      w.log.push(line);
      o.onStep?.(i, line);
      await apply(w, op, i, find, () => calls++);
      if (findings.length) break;
      for (const id of w.tasks) w.noteTip(id);
      w.noteTip("(leases)", "refs/handoff/leases");
      const reads = pickReads(w, rnd, o.reads);
      calls += await compareReads(w, reads, i, find, rnd.chance(0.35));
    }
  } finally {
    await w.close();
  }
  return { root: w.root, findings, log: w.log, calls };
}

/** `n` tasks added through the store in this process (as `task add` would, one commit each), an hour before the walk. */
export async function addBulk(w: World, n: number): Promise<void> {
  const { openStore } = await import("../../src/store/store.ts");
  const { addTask } = await import("../../src/store/task-store.ts");
  const store = await openStore({ cwd: w.A, agent: "lead", env: cleanEnv({ HANDOFF_NOW: new Date(T0 - 3_600_000).toISOString() }) });
  try {
    for (let i = 0; i < n; i++) {
      const id = `bulk-${String(i).padStart(4, "0")}`;
      await addTask(store, { id, objective: `bulk ${i}`, priority: i % 4, scope: i % 9 ? [] : [GLOBS[i % GLOBS.length]!], maxAttempts: store.config.maxAttempts });
      if (i % 50 === 0) w.tasks.push(id);
    }
  } finally {
    store.close();
  }
  w.log.push(`(${n} tasks bulk-0000.. added by agent lead at ${new Date(T0 - 3_600_000).toISOString()}, priority i%4, scope on every 9th)`);
}

async function apply(w: World, op: Op, i: number, find: (step: number, what: string, a: string, t: string) => void, count: () => void): Promise<void> {
  switch (op.k) {
    case "cli": {
      if (op.args[0] === "task" && op.args[1] === "add") w.tasks.push(op.args[op.args.indexOf("--id") + 1]!);
      if (op.clone === "B") {
        count();
        w.cli(w.B, op.agent, op.args);
        return;
      }
      w.freshTruth();
      const a = w.cli(w.A, op.agent, op.args);
      if ((w.remote && drawsAtRandom(op.args)) || randomId(op.args)) return void count();
      const t = w.swapped(() => w.cli(w.A, op.agent, op.args, true));
      count(), count();
      if (show(quietMarkOff(op.args, a, t)) !== show(t)) find(i, `the write's answer differs: ${op.args.join(" ")}`, show(a), show(t));
      compareRefs(w, i, find);
      return;
    }
    case "mcp": {
      if (op.tool === "create_task") w.tasks.push(String(op.args.id));
      w.freshTruth();
      const r = await w.mcp!.call(op.tool, op.args);
      if (w.remote && op.tool === "claim_next") return void count();
      const t = w.swapped(() => w.cli(w.A, "m", op.cli, true, w.mcpNow));
      count();
      const aOk = !r.isError;
      if (aOk !== (t.code === 0)) find(i, `the mcp server's ${op.tool} ${aOk ? "succeeded" : "was refused"}, the one-shot ${op.cli.join(" ")} in the truth ${t.code === 0 ? "succeeded" : "was refused"}`, JSON.stringify(r.structuredContent ?? r.content), show(t));
      compareRefs(w, i, find);
      return;
    }
    case "git": {
      const r = runSync("git", op.args, w.A, GIT_ID);
      // Only `remote set-head -d` with no origin/HEAD to delete may fail: nothing changed then.
      if (r.code !== 0 && !(op.args[0] === "remote" && op.args.includes("-d"))) throw new Error(`git ${op.args.join(" ")}: ${r.stderr}`);
      return;
    }
    case "policy": {
      writeFileSync(join(w.A, ".handoff.yaml"), op.yaml);
      git(w.A, "add", ".handoff.yaml");
      const r = runSync("git", ["commit", "-q", "-m", `policy ${++w.policyN}`], w.A, { ...GIT_ID, GIT_AUTHOR_DATE: w.iso, GIT_COMMITTER_DATE: w.iso });
      if (r.code !== 0 && !/nothing to commit/.test(r.stdout + r.stderr)) throw new Error(r.stderr);
      return;
    }
    case "rmcache":
      for (const n of op.names) rmSync(join(w.A, ".git", "handoff", n), { recursive: true, force: true });
      return;
    case "time":
      w.now += op.minutes * 60_000;
      await w.startMcp();
      return;
    case "mcp-restart":
      await w.startMcp();
      return;
  }
}

/**
 * A sync in A that went by what the last sync that found nothing to do left in
 * `sync-<remote>.quiet` (a cache: the truth has none) says so with `"unchanged": true`
 * (docs/sync.md); the truth's whole sync must then have found nothing either, and the rest of the
 * answer is compared as printed. Only that mark is taken off, only where the truth has none.
 */
function quietMarkOff(args: string[], a: Run, t: Run): Run {
  if (args[0] !== "sync" || a.code !== 0) return a;
  const x = parse(a.stdout);
  const y = parse(t.stdout);
  if (!x || typeof x !== "object" || (x as { unchanged?: unknown }).unchanged !== true) return a;
  if (y && typeof y === "object" && "unchanged" in y) return a;
  const { unchanged: _, ...rest } = x as Record<string, unknown>;
  return { ...a, stdout: JSON.stringify(rest, null, 2) + "\n" };
}

/**
 * claim --next through a sync remote draws at random among the best few when others seem to be
 * taking work (core/candidate-choice.ts): its choice is not replayed, only what follows is read.
 */
const drawsAtRandom = (args: string[]) => (args[0] === "claim" && args.includes("--next")) || (args[0] === "ready" && args.includes("--claim"));
/** Writes that name what they make with a random id (a release request, a handoff): not replayed either. */
const randomId = (args: string[]) => args[0] === "ask" || args[0] === "handoff";

/** For each ref whose value is not in `other`: its commit and record as this repository holds them. */
function refDetails(dir: string, mine: string, other: string): string {
  const theirs = new Set(other.split("\n"));
  let out = "";
  for (const line of mine.split("\n")) {
    if (theirs.has(line) || !line.startsWith("refs/handoff/")) continue;
    const oid = line.slice(line.indexOf(" ") + 1);
    const file = line.startsWith("refs/handoff/tasks/") ? "task.json" : line === "refs/handoff/leases ".concat(oid) ? "leases.json" : null;
    const r = runSync("git", ["cat-file", "-p", oid], dir, {});
    const rec = file ? runSync("git", ["cat-file", "-p", `${oid}:${file}`], dir, {}) : null;
    out += `\n--- ${line}\n${r.stdout}${rec ? `--- ${file}\n${rec.stdout}` : ""}`;
  }
  return out;
}

/**
 * Whether the refs differ only in task records whose JSON has the same keys and values in another
 * order (a record built on one read from tasks.cache keeps the order it was written in; reported).
 */
function sameButKeyOrder(w: World, a: string, t: string): boolean {
  const map = (text: string) => new Map(text.split("\n").map((l) => [l.slice(0, l.indexOf(" ")), l.slice(l.indexOf(" ") + 1)] as const));
  const [ma, mt] = [map(a), map(t)];
  if (ma.size !== mt.size) return false;
  for (const [ref, oa] of ma) {
    const ot = mt.get(ref);
    if (ot === oa) continue;
    if (ot === undefined || !ref.startsWith("refs/handoff/tasks/")) return false;
    // A write may make more than one commit (an expiry, then the change): each one back to where
    // both histories meet must hold the same record and event, whatever the key order.
    const commit = (dir: string, oid: string) => runSync("git", ["cat-file", "-p", oid], dir, {}).stdout;
    const record = (dir: string, oid: string) => JSON.stringify(sortedKeys(parse(runSync("git", ["cat-file", "-p", `${oid}:task.json`], dir, {}).stdout)));
    const body = (c: string) => c.replace(/^tree .*\n/, "").replace(/^parent .*\n/, "");
    const parent = (c: string) => /^parent (\S+)$/m.exec(c)?.[1] ?? null;
    let x: string | null = oa;
    let y: string | null = ot;
    for (let n = 0; x !== y; n++) {
      if (x === null || y === null || n > 8) return false;
      const cx: string = commit(w.A, x);
      const cy: string = commit(w.T, y);
      if (body(cx) !== body(cy) || record(w.A, x) !== record(w.T, y)) return false;
      x = parent(cx);
      y = parent(cy);
    }
  }
  return true;
}

function compareRefs(w: World, i: number, find: (step: number, what: string, a: string, t: string) => void): void {
  const a = w.refs(w.A);
  const t = w.refs(w.T);
  if (a !== t && !(sameButKeyOrder(w, a, t) && !known("key-order"))) find(i, "the refs the write left differ", a + refDetails(w.A, a, t), t + refDetails(w.T, t, a));
  if (!w.remote) return;
  const ra = git(w.R, "for-each-ref", "--format=%(refname) %(objectname)");
  const rt = git(w.Rt, "for-each-ref", "--format=%(refname) %(objectname)");
  if (ra !== rt) find(i, "the sync remote's refs after the write differ", ra, rt);
}

async function compareReads(w: World, reads: Read[], i: number, find: (step: number, what: string, a: string, t: string) => void, withMcp: boolean): Promise<number> {
  w.freshTruth();
  const mcpTruth: Read[] = w.mcp && withMcp
    ? [
        { args: ["ready", "--json", "--limit", "50"], agent: "m", at: w.mcpNow },
        { args: ["leases", "--json"], agent: "m", at: w.mcpNow },
        { args: ["events", "--json", "--limit", "10"], agent: "m", at: w.mcpNow },
        { args: ["task", "list", "--json", "--limit", "100"], agent: "m", at: w.mcpNow },
      ]
    : [];
  const all = [...reads, ...mcpTruth];
  w.log.push(`   then reads in A (each compared with the truth): ${reads.map((r) => `HANDOFF_AGENT=${r.agent} git handoff ${r.args.map(q).join(" ")}`).join("; ")}${mcpTruth.length ? "; mcp list_tasks, ready_tasks, list_leases, events" : ""}`);
  const inA = (async () => {
    const out: Run[] = [];
    for (const r of reads) out.push(await w.cliAsync(w.A, r.agent, r.args));
    return out;
  })();
  const inT = (async () => {
    const out: Run[] = [];
    for (const r of all) {
      stripCaches(w.T);
      out.push(await w.cliAsync(w.T, r.agent, r.args, true, r.at));
    }
    return out;
  })();
  const [a, t] = await Promise.all([inA, inT]);
  for (let k = 0; k < reads.length; k++) {
    const sa = show(a[k]!);
    const st = normalise(show(t[k]!), w);
    if (sa !== st) {
      find(i, `read \`HANDOFF_AGENT=${reads[k]!.agent} git handoff ${reads[k]!.args.join(" ")}\` differs`, sa, st);
      return all.length + reads.length;
    }
  }
  if (w.mcp && withMcp) {
    const [ready, leases, events, truthList] = t.slice(reads.length).map((r) => parse(r.stdout));
    const m = w.mcp;
    const pairs: [string, unknown, unknown][] = [
      ["list_tasks {limit:100} .tasks vs task list --json --limit 100", (await m.ok("list_tasks", { limit: 100 })).tasks, truthList],
      ["ready_tasks {limit:50} .tasks vs ready --json --limit 50 (agent m)", (await m.ok("ready_tasks", { limit: 50 })).tasks, ready],
      ["list_leases .leases vs leases --json", (await m.ok("list_leases", {})).leases, leases],
      ["events {limit:10} .events vs events --json --limit 10", (await m.ok("events", { limit: 10 })).events, events],
    ];
    for (const [what, x, y] of pairs) {
      const sx = normalise(canon(x), w);
      const sy = normalise(canon(y), w);
      if (sx !== sy) {
        find(i, `mcp server: ${what}`, sx, sy);
        break;
      }
    }
  }
  return all.length + reads.length;
}

/**
 * The comparison's own check: a cache line planted with another status (what a stale cache would
 * serve) must be reported by the same reads and normalisation the walk uses. Returns the findings.
 */
export async function plantedCacheIsCaught(): Promise<Finding[]> {
  const w = new World(0, false, false);
  const findings: Finding[] = [];
  const find = (step: number, what: string, a: string, t: string) => findings.push({ seed: 0, step, what, a, t });
  for (const id of ["p1", "p2"]) {
    const r = w.cli(w.A, "a", ["task", "add", `planted ${id}`, "--id", id]);
    if (r.code !== 0) throw new Error(show(r));
  }
  const file = tasksCacheFile(join(w.A, ".git"));
  const text = readFileSync(file, "utf8");
  const planted = text.replace(/"status":"todo"/g, '"status":"done"');
  if (planted === text) throw new Error(`no line to plant in tasks.cache:\n${text}`);
  writeFileSync(file, planted);
  await compareReads(w, [{ args: ["task", "list", "--json"], agent: "r" }], 0, find, false);
  return findings;
}

/**
 * Syncs of A with nothing between (seed 1041 at HANDOFF_FUZZ_TICK=0 met it at step 7): the last
 * goes by the quiet record of the one before, which the truth has not, and must answer as the
 * truth's whole sync does but for its mark. Returns the findings, and whether the record was there
 * for the second sync to go by.
 */
export async function quietSyncIsCompared(): Promise<{ findings: Finding[]; quiet: boolean }> {
  const w = new World(0, false, true);
  const findings: Finding[] = [];
  const find = (step: number, what: string, a: string, t: string) => findings.push({ seed: 0, step, what, a, t });
  let quiet = false;
  try {
    // The first sync pushes t0; the second finds nothing and leaves its record; the third goes by it.
    const steps = [["task", "add", "quiet t0", "--id", "t0"], ["sync", "--json"], ["sync", "--json"], ["sync", "--json"]];
    for (let i = 0; i < steps.length && !findings.length; i++) {
      w.now += 1000;
      if (i === 3) quiet = existsSync(join(w.A, ".git", "handoff", "sync-origin.quiet"));
      await apply(w, { k: "cli", clone: "A", agent: "a", args: steps[i]! }, i, find, () => {});
    }
  } finally {
    await w.close();
  }
  return { findings, quiet };
}
