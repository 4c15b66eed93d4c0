// A lease set of many bounded-yet-costly globs (each 64 alternatives of 1,000 characters, the most
// paths.ts lets a pattern hold) made every local check compile and search them all: over three
// minutes of CPU for 1,000 of them, in every edit hook. A check now stops at a budget of matching
// work (core/match-budget.ts) and answers what it did not look at as "may be leased", naming the
// budget: warn, deny in strict mode, never "ok"; a denial it found stands. The claim advisory lists
// what it did not look at as a possible overlap.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { checkPaths } from "../src/core/check.ts";
import { acquireLeases } from "../src/core/lease-ops.ts";
import { GRANT_MATCH_BUDGET } from "../src/core/match-budget.ts";
import type { Lease } from "../src/core/lease.ts";
import { cleanupTemp } from "./support/repo.ts";
import { team } from "./support/team.ts";
// Each test takes indices no other file takes: a glob compiled once is cached in its process (test/run.ts
// runs files together), and a cached glob costs the budget nothing, so a check would look at all of them.
import { costly, costlyApart } from "./support/costly-globs.ts";

test.after(cleanupTemp);

const BUDGET = /may be leased by another agent: the lease set has \d+ lease\(s\) of other agents this check did not look at: its leases' globs took more than the budget of matching one check may do/;

test("check: past the budget of matching the path is answered warn, naming it, not ok", () => {
  const t = team(["mallory", "bob"]);
  const patterns = Array.from({ length: 24 }, (_, i) => costly(5000 + i));
  const leased = t.as("mallory", ["lease", ...patterns]);
  assert.is(leased.code, 0, leased.stderr);
  // None of them names src/core/paths.ts: looked at in full, it is free.
  const r = t.as("bob", ["check", "src/core/paths.ts", "--json"]);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.json.verdict, "warn");
  assert.match(r.json.paths[0].message, BUDGET);
  // A path no costly lease needs matching for (a plain lease of the same path) is still told exactly.
  assert.is(t.as("mallory", ["lease", "docs/a.md"]).code, 0);
  const plain = t.as("bob", ["check", "docs/a.md", "--json"]);
  assert.is(plain.json.paths[0].holders.some((h: { pattern: string }) => h.pattern === "docs/a.md"), true);
});

test("in strict mode the budget's answer is deny with the same reason; a denial found before it stands", () => {
  const now = new Date("2026-12-01T00:00:00Z");
  const lease = (pattern: string, exclusive = false): Lease => ({
    pattern, agent: "mallory", task: null, exclusive, acquired_at: now.toISOString(), expires_at: new Date(now.getTime() + 3_600_000).toISOString(),
    ttl_ms: 3_600_000, reason: null, worktree: null, branch: null, scope: "worktree",
  });
  const costlyLeases = Array.from({ length: 24 }, (_, i) => lease(costly(5100 + i)));
  const strict = { agent: "bob", now, policy: { mode: "strict", ignore: [] } as never };
  const free = checkPaths(["src/core/paths.ts"], costlyLeases, strict);
  assert.is(free.verdict, "deny");
  assert.match(free.answers[0]!.message, BUDGET);
  const held = checkPaths(["src/core/paths.ts"], [lease("src/**", true), ...costlyLeases], strict);
  assert.is(held.verdict, "deny");
  assert.match(held.answers[0]!.message, /inside an exclusive lease on src\/\*\* held by mallory/);
});

test("claim: leases not looked at within the budget are listed as possible overlaps, saying why", () => {
  const t = team(["mallory", "bob"]);
  assert.is(t.as("mallory", ["lease", ...Array.from({ length: 24 }, (_, i) => costly(5200 + i))]).code, 0);
  assert.is(t.as("lead", ["task", "add", "work", "--id", "w", "--scope", "src/**"]).code, 0);
  const r = t.as("bob", ["claim", "w", "--json"]);
  assert.is(r.code, 0, r.stderr);
  const unchecked = r.json.overlaps.filter((o: { unchecked?: boolean }) => o.unchecked);
  assert.ok(unchecked.length > 0, JSON.stringify(r.json.overlaps.map((o: { verdict: string }) => o.verdict)));
  assert.ok(unchecked.every((o: { verdict: string; agent: string }) => o.verdict === "warn" && o.agent === "mallory"));
  assert.is(t.as("bob", ["release", "w"]).code, 0);
  const text = t.as("bob", ["claim", "w"]);
  assert.match(text.stdout, /warn  src\/\*\* may overlap \*\*\/\{a,b\}.* \(mallory, no task\): not looked at, its leases' globs took more than the budget of matching/);
});

test("a grant past its budget of matching refuses too_costly, naming the budget and the leases it could not compare; a conflict found stands", () => {
  const now = new Date("2026-12-01T00:00:00Z");
  const lease = (pattern: string, exclusive = false): Lease => ({
    pattern, agent: "mallory", task: null, exclusive, acquired_at: now.toISOString(), expires_at: new Date(now.getTime() + 3_600_000).toISOString(),
    ttl_ms: 3_600_000, reason: null, worktree: null, branch: null, scope: "worktree",
  });
  const ctx = { actor: { agent: "bob", worktree: null, branch: null, scope: "worktree" as const }, now };
  const req = { patterns: ["src/**/*.ts"], exclusive: true, task: null, ttlMs: 60_000, reason: null };
  const costlySet = { leases: Array.from({ length: 30 }, (_, i) => lease(costlyApart(5300 + i))) };
  const out = acquireLeases(costlySet, req, ctx);
  assert.is(out.ok, false);
  if (out.ok) return;
  assert.is(out.refusal.code, "too_costly");
  assert.match(out.refusal.message, /within the budget of glob matching a grant may do \(2,000,000 units\), so it cannot prove the lease free: mallory's "\*\*\/\{a,b\}/);
  assert.is(out.refusal.data!.budget, GRANT_MATCH_BUDGET);
  assert.ok((out.refusal.data!.unchecked_count as number) > 0);
  // An exclusive lease in the way, found first, is the answer: who holds it, not the budget.
  const held = acquireLeases({ leases: [lease("src/a.ts", true), ...costlySet.leases] }, req, ctx);
  assert.is(held.ok, false);
  if (!held.ok) assert.is(held.refusal.code, "held_by_other");
  // A shared request meets only exclusive leases: the costly shared ones are not compared at all.
  assert.is(acquireLeases(costlySet, { ...req, exclusive: false }, ctx).ok, true);
});

test.run();
