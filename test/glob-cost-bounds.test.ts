// The cost of comparing lease patterns is bounded by construction. Each pattern is bounded (a path
// segment of at most 255 characters, 4,096 characters of `{a,b}` alternatives in all) where it is
// typed and where it is received, and what a grant may spend comparing is a budget of units of
// work (core/match-budget.ts): a lease set of legal but costly globs pushed by plain git makes a
// claim refuse (too_costly), never run for minutes or grant blindly, while 1,000 leases of the
// shapes people lease (folders, `src/**/*.ts`, files) are answered exactly.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cachedPatterns, CACHE_ENTRIES, matchesPath, overlapWitness } from "../src/core/glob-overlap.ts";
import { findConflicts } from "../src/core/lease-ops.ts";
import type { Lease } from "../src/core/lease.ts";
import { GRANT_MATCH_BUDGET, newMatchBudget } from "../src/core/match-budget.ts";
import { amendRecord, eventMessage } from "./support/forge.ts";
import { cleanupTemp, cli, handoffRefs, succeeded } from "./support/repo.ts";
import { storeLease, storeSync, storeTasks } from "./support/seed.ts";
import { cloneOf, emptyRemote } from "./support/servers.ts";

test.after(cleanupTemp);

const ok = succeeded;
const alternatives6 = "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}";

/** A legal glob (64 alternatives, 4,096 characters in all) that is costly to compare with `src/**\/*.ts`. */
function costlyGlob(tag: string): string {
  let p = `**/${alternatives6}${tag}`;
  while (p.length - 24 + 2 + 9 <= 64) p += "*s";
  return p + "s".repeat(8) + "x";
}

/** Adds `patterns` as live leases of `agent` to the remote's lease set, one commit written with plain git. */
function pushLeases(bare: string, agent: string, patterns: string[], exclusive = false): void {
  const at = new Date().toISOString();
  const expires = new Date(Date.now() + 3_600_000).toISOString();
  const event = { type: "leased", task: "", agent, at, scope: "primary", worktree: null, branch: null, paths: patterns, exclusive, expires_at: expires };
  amendRecord(
    bare,
    "refs/handoff/leases",
    (set) => {
      const template = set.leases[0];
      for (const pattern of patterns) set.leases.push({ ...template, pattern, agent, task: null, exclusive, acquired_at: at, expires_at: expires, ttl_ms: 3_600_000, reason: null, worktree: null, branch: null });
    },
    { author: agent, file: "leases.json", message: eventMessage(event) },
  );
}

/** A remote with m1's lease on docs/m1.md, and the victim's clone that has synced it (written in-process: support/seed.ts). */
async function world() {
  const bare = emptyRemote();
  const attacker = cloneOf(bare);
  const victim = cloneOf(bare);
  await storeLease({ cwd: attacker, agent: "m1" }, ["docs/m1.md"]);
  await storeSync({ cwd: attacker, agent: "m1" });
  await storeSync({ cwd: victim, agent: "lead" });
  return { bare, attacker, victim };
}

test("a pattern past the new bounds is refused as typed: exit 2, invalid_input, nothing written", () => {
  const repo = cloneOf(emptyRemote());
  ok(cli(["remote", "--none"], { cwd: repo, agent: "lead" }));
  const before = handoffRefs(repo);
  const long = cli(["lease", `src/${"n".repeat(256)}.ts`, "--json"], { cwd: repo, agent: "lead" });
  assert.is(long.code, 2, long.stderr);
  assert.is(long.json?.error?.code ?? long.json?.code, "invalid_input", long.stdout + long.stderr);
  assert.match(long.stderr, /has a path segment of 259 characters; at most 255/);
  // 64 alternatives of 73 characters each: 4,672 in all.
  const wide = cli(["task", "add", "wide", "--scope", `src/${alternatives6}${"w".repeat(60)}.ts`], { cwd: repo, agent: "lead" });
  assert.is(wide.code, 2, wide.stderr);
  assert.match(wide.stderr, /expands to 4,672 characters in all \(\{a,b\} alternatives\); at most 4,096/);
  assert.match(wide.stderr, /\[invalid_input\]/);
  assert.is(handoffRefs(repo), before);
  // Within the bounds: a 255-character name and 64 alternatives of 64 characters.
  ok(cli(["lease", `src/${"n".repeat(252)}.ts`], { cwd: repo, agent: "lead" }));
  ok(cli(["lease", `src/${alternatives6}${"w".repeat(50)}.ts`], { cwd: repo, agent: "lead" }));
});

test("a lease an older build could write, now past the bounds, is quarantined on receive with the reason; the lease set here is kept", async () => {
  const { bare, victim } = await world();
  const before = handoffRefs(victim);
  pushLeases(bare, "m2", [`src/${"n".repeat(300)}.ts`]);
  const r = cli(["sync", "--json"], { cwd: victim, agent: "lead" });
  assert.is(r.code, 3, r.stderr);
  const q = r.json.quarantined.find((x: { ref: string }) => x.ref === "refs/handoff/leases");
  assert.ok(q, JSON.stringify(r.json.quarantined));
  assert.match(q.reason, /the pattern "src\/nnn.*…? has a path segment of 303 characters; at most 255/, q.reason);
  assert.is(handoffRefs(victim), before, "no ref moved");
  const leases = cli(["leases", "--json"], { cwd: victim, agent: "lead" });
  assert.equal(leases.json.map((l: { pattern: string }) => l.pattern), ["docs/m1.md"]);
});

test("a crafted but legal lease set pushed by plain git makes a claim refuse too_costly, naming the budget and the leases, not grant", async () => {
  const { bare, victim } = await world();
  pushLeases(bare, "mallory", Array.from({ length: 30 }, (_, i) => costlyGlob(`m${i}`)));
  await storeSync({ cwd: victim, agent: "lead" });
  await storeTasks({ cwd: victim, agent: "lead" }, [{ id: "t", objective: "types", scope: ["src/**/*.ts"], exclusive: true }]);
  const before = handoffRefs(victim);
  const r = cli(["claim", "t", "--json"], { cwd: victim, agent: "bob" });
  assert.is(r.code, 3, r.stdout + r.stderr);
  assert.match(r.stderr, /\[too_costly\]/);
  assert.match(r.stderr, /could not compare \d+ live lease\(s\) of other agents with "src\/\*\*\/\*\.ts" within the budget of glob matching a grant may do \(2,000,000 units\), so it cannot prove the lease free: mallory's "\*\*\/\{a,b\}/);
  assert.is(handoffRefs(victim), before, "nothing granted");
  // A lease of the same glob by hand is refused the same way.
  const lease = cli(["lease", "src/**/*.ts", "--exclusive"], { cwd: victim, agent: "bob" });
  assert.is(lease.code, 3, lease.stderr);
  assert.match(lease.stderr, /\[too_costly\]/);
});

/** 1,000 leases of the shapes people lease, of ten agents. */
function ordinary(now: Date): Lease[] {
  const shapes = (i: number) => [`pkg${i}/**`, `src/mod${i}/**/*.ts`, `src/mod${i}/file${i}.ts`, `docs/${i}.md`][i % 4]!;
  return Array.from({ length: 1000 }, (_, i) => ({
    pattern: shapes(i), agent: `a${i % 10}`, task: null, exclusive: i % 3 === 0, acquired_at: now.toISOString(),
    expires_at: new Date(now.getTime() + 3_600_000).toISOString(), ttl_ms: 3_600_000, reason: null, worktree: null, branch: null, scope: "worktree" as const,
  }));
}

test("1,000 ordinary leases: a grant's search is exact within its budget", () => {
  const now = new Date();
  const leases = ordinary(now);
  for (const requested of ["src/**/*.ts", "src/**", "**/*.md", "src/mod1/file1.ts", "pkg8/a/b.ts", "lib/**"]) {
    const work = newMatchBudget(GRANT_MATCH_BUDGET);
    const found = findConflicts(leases, "me", [requested], true, now, 0, work);
    assert.equal(found.unchecked, [], requested);
    const brute = leases.filter((l) => overlapWitness(requested, l.pattern) !== null);
    assert.is(found.conflicts.length, brute.length, requested);
  }
});

test("1,000 ordinary leases through the CLI: check and claim answer exactly", async () => {
  const { bare, victim } = await world();
  const now = new Date();
  const all = ordinary(now);
  for (let a = 0; a < 10; a++) {
    const mine = all.filter((l) => l.agent === `a${a}`);
    pushLeases(bare, `a${a}`, mine.filter((l) => l.exclusive).map((l) => l.pattern), true);
    pushLeases(bare, `a${a}`, mine.filter((l) => !l.exclusive).map((l) => l.pattern), false);
  }
  await storeSync({ cwd: victim, agent: "lead" });
  const check = cli(["check", "src/mod1/file1.ts", "src/mod2/x.ts", "lib/free.ts", "--json"], { cwd: victim, agent: "bob" });
  const answers = Object.fromEntries(check.json.paths.map((p: { path: string }) => [p.path, p]));
  // Lease 1 is a1's shared src/mod1/**/*.ts; no file lease names src/mod1 (file leases are of i = 2 mod 4).
  assert.equal(answers["src/mod1/file1.ts"].holders.map((h: { pattern: string }) => h.pattern), ["src/mod1/**/*.ts"]);
  assert.equal(answers["lib/free.ts"].verdict, "ok");
  for (const a of Object.values(answers) as { message: string }[]) assert.not.match(a.message, /budget/);
  await storeTasks({ cwd: victim, agent: "lead" }, [{ id: "f", objective: "free", scope: ["lib/**"], exclusive: true }]);
  ok(cli(["claim", "f"], { cwd: victim, agent: "bob" }));
  await storeTasks({ cwd: victim, agent: "lead" }, [{ id: "h", objective: "held", scope: ["src/mod9/**"], exclusive: true }]);
  const held = cli(["claim", "h"], { cwd: victim, agent: "carol" });
  assert.is(held.code, 3, held.stderr);
  assert.match(held.stderr, /src\/mod9\/\*\* overlaps an exclusive lease on src\/mod9\/\*\*\/\*\.ts held by a9.*\[held_by_other\]/);
});

test("the caches of compiled and expanded patterns stay bounded", () => {
  for (let i = 0; i < 3 * CACHE_ENTRIES; i++) {
    matchesPath(`src/[a-z]${i}*.ts`, "src/a1.ts");
    overlapWitness(`lib/{a,b}${i}*.ts`, "lib/**/*.ts");
  }
  assert.ok(cachedPatterns() <= CACHE_ENTRIES, String(cachedPatterns()));
});

test.run();
