// The lease set's order and groups (core/lease-order.ts, core/lease-groups.ts), in process: what
// a claim looks at instead of every live lease must give the answers a walk of every lease gives.
// Random sets and patterns, compared with brute force.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { claimOverlaps } from "../src/core/claim-overlap.ts";
import { overlapWitness } from "../src/core/glob-overlap.ts";
import { earliestExpiry, groupKey, leaseGroups, leasesNear, leasesOfAgent, leasesOfTask, listStep, secondsIndexOf } from "../src/core/lease-groups.ts";
import { acquireLeases, findConflicts, releaseTaskLeases, settleLeases } from "../src/core/lease-ops.ts";
import { isInLeaseOrder, keepOrder, leaseOrder, sortLeases, withLeases } from "../src/core/lease-order.ts";
import { isLeaseLive, type Lease, type LeaseSet } from "../src/core/lease.ts";
import { isGlob } from "../src/core/paths.ts";
import { followTask } from "../src/core/task-leases.ts";
import type { Task } from "../src/core/task.ts";
import { ansiLcg as rng } from "./support/rng.ts";

const T0 = Date.parse("2026-11-29T10:00:00Z");
const now = new Date(T0);

// Folders and names chosen to meet: shared folders, root files, glob-first patterns, braces,
// escapes and a parenthesis (a record from another clone may hold either).
const FIRST = ["src", "docs", "lib", "Src", "a\\b", "ab", "x(y)", "*", "{src,lib}", "**", "s?c"];
const REST = ["a.ts", "b/c.ts", "**", "*.md", "b/**", "x.ts", "[ab].ts"];

function pattern(r: () => number): string {
  const first = FIRST[Math.floor(r() * FIRST.length)]!;
  if (r() < 0.15) return first === "**" ? "README.md" : first; // a root file or root glob
  return `${first}/${REST[Math.floor(r() * REST.length)]!}`;
}

function lease(r: () => number, i: number): Lease {
  const expires = new Date(T0 + (r() < 0.2 ? -60_000 : 600_000)).toISOString();
  return {
    pattern: pattern(r),
    agent: `a${i % 5}`,
    task: r() < 0.5 ? `t${i % 7}` : null,
    exclusive: r() < 0.4,
    acquired_at: new Date(T0 - 60_000).toISOString(),
    expires_at: expires,
    ttl_ms: 600_000,
    reason: null,
    worktree: null,
    branch: null,
    scope: "worktree",
  };
}

function leases(r: () => number, n: number): Lease[] {
  // Distinct (pattern, agent) pairs, as a stored set has.
  const seen = new Set<string>();
  const out: Lease[] = [];
  for (let i = 0; out.length < n && i < n * 4; i++) {
    const l = lease(r, i);
    if (seen.has(`${l.pattern}\0${l.agent}`)) continue;
    seen.add(`${l.pattern}\0${l.agent}`);
    out.push(l);
  }
  return out;
}

test("isGlob: the character scan answers as the regex did (a backslash is no escape: it is a file name's character)", () => {
  const reference = (p: string) => /[*?[\]{}]/.test(p);
  const alphabet = ["a", "/", "*", "?", "[", "]", "{", "}", "\\", "\n", "(", "."];
  const r = rng(7);
  for (let n = 0; n < 5000; n++) {
    let p = "";
    const len = Math.floor(r() * 8);
    for (let i = 0; i < len; i++) p += alphabet[Math.floor(r() * alphabet.length)]!;
    assert.is(isGlob(p), reference(p), JSON.stringify(p));
  }
});

/** leasesNear(set, p) holds every lease overlapWitness finds overlapping p, as a subsequence of the set (the same order). */
function checkNear(set: Lease[], p: string): void {
  const near = leasesNear(set, p);
  for (const l of set) if (overlapWitness(p, l.pattern) !== null) assert.ok(near.includes(l), `${p} overlaps ${l.pattern} but was not near it`);
  let i = 0;
  for (const l of near) {
    while (i < set.length && set[i] !== l) i++;
    assert.ok(i < set.length, `${p}: near leases out of the set's order`);
    i++;
  }
}

test("leasesNear holds every lease that overlaps the pattern, in the set's order, ordered set or not", () => {
  const r = rng(11);
  for (let round = 0; round < 200; round++) {
    const raw = leases(r, 1 + Math.floor(r() * 40));
    for (const set of [raw, sortLeases(raw)]) {
      for (let q = 0; q < 10; q++) checkNear(set, pattern(r));
    }
  }
});

// A folder holding most leases (a repository whose code is all under src/) is narrowed by the
// pattern's second component: second components that meet or may meet (the same name, another
// case, globs, braces, escapes, extglobs, dot segments, a file beside a folder of its name).
const SECOND = ["a.ts", "b/c.ts", "b", "B/c.ts", "b/**", "**", "*.md", "*/c.ts", "c/d.ts", "{b,c}/x.ts", "\\b/x.ts", "b(c)/x.ts", "@(b)/c.ts", "./b/c.ts", "b/../c/d.ts", "[bc]/x.ts", "b?/x.ts", "bb/x.ts", "b.ts", "c", "b/c.ts/d"];

function deepPattern(r: () => number): string {
  if (r() < 0.1) return pattern(r); // now and then another folder, a root file or a glob-first one
  return `src/${SECOND[Math.floor(r() * SECOND.length)]!}`;
}

test("leasesNear in a folder of many leases, narrowed by the second component: every overlapping lease still near", () => {
  const r = rng(17);
  for (let round = 0; round < 150; round++) {
    const seen = new Set<string>();
    const raw: Lease[] = [];
    for (let i = 0; raw.length < 20 + (round % 60) && i < 400; i++) {
      const l = { ...lease(r, i), pattern: deepPattern(r) };
      if (seen.has(`${l.pattern}\0${l.agent}`)) continue;
      seen.add(`${l.pattern}\0${l.agent}`);
      raw.push(l);
    }
    for (const set of [raw, sortLeases(raw)]) {
      for (let q = 0; q < 12; q++) checkNear(set, deepPattern(r));
    }
  }
  // Narrowed: a plain second component leaves out the leases of other plain ones.
  const many = Array.from({ length: 40 }, (_, i) => ({ ...lease(rng(i + 1), i), pattern: `src/m${i}/f.ts` }));
  assert.equal(leasesNear(sortLeases(many), "src/m7/**").map((l) => l.pattern), ["src/m7/f.ts"]);
});

test("conflicts and a claim's overlaps are those a walk of every lease finds", () => {
  const r = rng(13);
  for (let round = 0; round < 200; round++) {
    const set = sortLeases(leases(r, 1 + Math.floor(r() * 40)));
    const patterns = [pattern(r), pattern(r)];
    for (const exclusive of [false, true]) {
      const brute = [];
      for (const requested of patterns) {
        for (const l of set) {
          if (l.agent === "me" || !isLeaseLive(l, now)) continue;
          if (!exclusive && !l.exclusive) continue;
          const witness = overlapWitness(requested, l.pattern);
          if (witness !== null) brute.push({ lease: l, requested, witness });
        }
      }
      assert.equal(findConflicts(set, "me", patterns, exclusive, now), { conflicts: brute, unchecked: [] });
    }
    const claimed = { id: "c", scope: patterns } as unknown as Task;
    // Other claimed tasks, some expired, some the caller's, some of other folders altogether.
    const tasks = Array.from({ length: Math.floor(r() * 12) }, (_, i) => {
      const agent = r() < 0.2 ? "me" : `a${i % 5}`;
      const expires = new Date(T0 + (r() < 0.2 ? -60_000 : 600_000)).toISOString();
      return { id: `o${i}`, status: "claimed", scope: Array.from({ length: Math.floor(r() * 3) }, () => pattern(r)), claim: { agent, expires_at: expires } } as unknown as Task;
    });
    const found = claimOverlaps(claimed, tasks, set, "me", now);
    const expected = new Set<string>();
    for (const t of tasks) {
      if (t.claim!.agent === "me" || Date.parse(t.claim!.expires_at) <= T0) continue;
      for (const p of t.scope) for (const s of patterns) if (overlapWitness(s, p) !== null) expected.add(`${t.id}\0${t.claim!.agent}\0${p}\0${s}`);
    }
    for (const l of set) {
      if (!isLeaseLive(l, now) || l.task === "c") continue;
      for (const s of patterns) if (overlapWitness(s, l.pattern) !== null) expected.add(`${l.task}\0${l.agent}\0${l.pattern}\0${s}`);
    }
    assert.equal(new Set(found.map((o) => `${o.task}\0${o.agent}\0${o.pattern}\0${o.scope}`)), expected);
    assert.equal(found, claimOverlaps(claimed, tasks, [...set], "me", now), "an unordered copy gives the same answer in the same order");
  }
});

/** Groups as a fresh walk makes them: key -> leases in the set's order. */
function bruteGroups(set: readonly Lease[]): Map<string, Lease[]> {
  const out = new Map<string, Lease[]>();
  for (const l of set) {
    const k = groupKey(l.pattern);
    out.set(k, [...(out.get(k) ?? []), l]);
  }
  return out;
}

const sorted = (m: ReadonlyMap<string, readonly Lease[]>) => [...m].sort((a, b) => (a[0] < b[0] ? -1 : 1));

test("a set derived by writes keeps its order, and its patched groups are the ones a fresh walk makes", () => {
  const r = rng(17);
  let set: LeaseSet = { leases: sortLeases(leases(r, 30)) };
  leaseGroups(set.leases); // grouped once, as a write's first read does
  for (let step = 0; step < 300; step++) {
    const ctx = { actor: { agent: `a${step % 5}`, worktree: null, branch: null, scope: "worktree" as const }, now };
    const pick = r();
    let next: LeaseSet;
    if (pick < 0.4) {
      const out = acquireLeases(set, { patterns: [pattern(r), pattern(r)], exclusive: false, task: `t${step % 7}`, ttlMs: 600_000, reason: null }, ctx);
      next = out.ok ? out.record : set;
    } else if (pick < 0.7) {
      const out = releaseTaskLeases(set, `t${step % 7}`, ctx);
      next = out.ok ? out.record : set;
    } else if (pick < 0.85) {
      const task = { id: `t${step % 7}`, status: "claimed", claim: { agent: ctx.actor.agent, expires_at: new Date(T0 + 300_000).toISOString(), ttl_ms: 300_000 } } as unknown as Task;
      const out = followTask(set, task, ctx);
      next = out.ok ? out.record : set;
    } else {
      // Plain order-keeping steps and additions, as lease-order.ts offers them.
      const kept = keepOrder(set.leases, set.leases.filter(() => r() < 0.9));
      next = { leases: withLeases(kept, leases(r, 2).filter((l) => !kept.some((k) => k.pattern === l.pattern && k.agent === l.agent))) };
    }
    assert.ok(isInLeaseOrder(next.leases), `step ${step}: a derived set is known to be in order`);
    assert.equal(next.leases, [...next.leases].sort(leaseOrder), `step ${step}: and it is`);
    if (r() < 0.5) {
      assert.equal(sorted(leaseGroups(next.leases)), sorted(bruteGroups(next.leases)), `step ${step}: groups`);
      for (let t = 0; t < 7; t++) assert.equal(leasesOfTask(next.leases, `t${t}`), next.leases.filter((l) => l.task === `t${t}`), `step ${step}: task t${t}`);
      for (let a = 0; a < 5; a++) assert.equal(leasesOfAgent(next.leases, `a${a}`), next.leases.filter((l) => l.agent === `a${a}`), `step ${step}: agent a${a}`);
      const first = Math.min(...next.leases.map((l) => Date.parse(l.expires_at)));
      assert.ok(earliestExpiry(next.leases) <= first, `step ${step}: the earliest expiry is a bound`);
      // The keys near every pattern (glob-first, escaped) follow the patched groups too.
      for (let q = 0; q < 3; q++) checkNear(next.leases, pattern(r));
    }
    set = next;
  }
});

test("a folder of many leases, written to again and again, stays narrowed right: its index by second component patched from write to write", () => {
  const r = rng(37);
  const ctx = (step: number) => ({ actor: { agent: `a${step % 5}`, worktree: null, branch: null, scope: "worktree" as const }, now });
  let set: LeaseSet = { leases: sortLeases(Array.from({ length: 60 }, (_, i) => ({ ...lease(r, i), expires_at: new Date(T0 + 600_000).toISOString(), pattern: deepPattern(r) })).filter((l, i, all) => all.findIndex((x) => x.pattern === l.pattern && x.agent === l.agent) === i)) };
  let patchedLists = 0;
  let patchedIndex = 0;
  for (let step = 0; step < 200; step++) {
    // Acquire or release, as claims and releases do; a query now and then (a claim's own scope).
    const out = r() < 0.6 ? acquireLeases(set, { patterns: [deepPattern(r)], exclusive: false, task: `t${step % 7}`, ttlMs: 600_000, reason: null }, ctx(step)) : releaseTaskLeases(set, `t${step % 7}`, ctx(step));
    if (!out.ok) continue;
    set = out.record;
    const src = leaseGroups(set.leases).get("src");
    if (src && listStep(src)) patchedLists++;
    if (r() < 0.5) for (let q = 0; q < 3; q++) checkNear(set.leases, `src/${SECOND[Math.floor(r() * SECOND.length)]!}`);
    if (src && secondsIndexOf(src) === "patched") patchedIndex++;
  }
  assert.ok(patchedLists >= 100, `only ${patchedLists} of the folder's lists were patched from the one before`);
  assert.ok(patchedIndex >= 50, `only ${patchedIndex} of its indexes were patched from the one before`);
});

test("a lease of a key near every pattern, added to or taken from a set of plain folders, is near from then on, and only then", () => {
  const r = rng(41);
  const late = new Date(T0 + 600_000).toISOString();
  const plain = sortLeases(["src/a.ts", "docs/b.md", "lib/c/**"].map((pattern, i) => ({ ...lease(r, i), pattern, expires_at: late })));
  assert.equal(leasesNear(plain, "src/a.ts").map((l) => l.pattern), ["src/a.ts"]);
  for (const odd of ["**/a.ts", "*.ts", "a\\b/x.ts", "x(y)/z.ts"]) {
    const glob: Lease = { ...plain[0]!, pattern: odd, agent: "a9" };
    const withGlob = withLeases(plain, [glob]);
    assert.ok(leasesNear(withGlob, "src/a.ts").includes(glob), `${odd} is near src/a.ts once added`);
    const without = keepOrder(withGlob, withGlob.filter((l) => l !== glob));
    assert.equal(leasesNear(without, "src/a.ts").map((l) => l.pattern), ["src/a.ts"], `${odd} gone again`);
  }
});

test("a sweep asked twice of the same set, at any time, drops exactly the leases expired then", () => {
  const r = rng(29);
  for (let round = 0; round < 200; round++) {
    const set = sortLeases(leases(r, 1 + Math.floor(r() * 30)));
    for (const offset of [-120_000, -30_000, 0, 30_000, 700_000]) {
      const at = new Date(T0 + offset);
      const ctx = { actor: { agent: "a1", worktree: null, branch: null, scope: "worktree" as const }, now: at };
      const expected = set.filter((l) => isLeaseLive(l, at));
      for (let again = 0; again < 2; again++) assert.equal(settleLeases({ leases: set }, ctx).record.leases, expected, `offset ${offset}`);
    }
  }
});

test("a lease added to a grouped set that expires first is swept when it expires", () => {
  const r = rng(31);
  const late = new Date(T0 + 600_000).toISOString();
  const set = sortLeases(leases(r, 20).map((l) => ({ ...l, expires_at: late })));
  assert.is(earliestExpiry(set), T0 + 600_000);
  const soon: Lease = { ...set[0]!, pattern: "zz/soon.ts", agent: "a9", expires_at: new Date(T0 + 60_000).toISOString() };
  const next = withLeases(set, [soon]);
  assert.ok(earliestExpiry(next) <= T0 + 60_000, "the patched bound takes the added lease's expiry");
  const ctx = { actor: { agent: "a1", worktree: null, branch: null, scope: "worktree" as const }, now: new Date(T0 + 300_000) };
  assert.equal(settleLeases({ leases: next }, ctx).record.leases, set);
});

test("withLeases on a set not known to be in order sorts it all", () => {
  const r = rng(19);
  const raw = leases(r, 20).reverse();
  const added = leases(rng(23), 3).map((l) => ({ ...l, agent: "new" }));
  const out = withLeases(raw, added);
  assert.equal(out, [...raw, ...added].sort(leaseOrder));
  assert.ok(isInLeaseOrder(out));
  assert.not.ok(isInLeaseOrder(raw));
});

test.run();
