// The pure lease core, in process: random sequences of lease operations by several agents never
// reach a state where an exclusive lease overlaps another agent's lease; check answers by mode, and
// for the takeover grace past another agent's expiry.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { checkPath } from "../src/core/check.ts";
import { matchesPath, overlaps } from "../src/core/glob-overlap.ts";
import { acquireLeases, releaseLeases, releaseTaskLeases, settleLeases } from "../src/core/lease-ops.ts";
import { EMPTY_LEASES, type LeaseSet } from "../src/core/lease.ts";
import { buildPolicy, defaultAnchored, DEFAULT_IGNORE, gitattributesIgnores, isIgnored, shapesOf } from "../src/core/lease-policy.ts";
import { anchorPattern, patternProblem } from "../src/core/paths.ts";
import type { Actor } from "../src/core/identity.ts";
import { ansiLcg as rng } from "./support/rng.ts";

const actor = (agent: string): Actor => ({ agent, worktree: `/w/${agent}`, branch: agent, scope: "worktree" });
const T0 = Date.parse("2026-11-29T10:00:00Z");
const at = (s: number) => new Date(T0 + s * 1000);

const PATTERNS = ["src/**", "src/a/**", "src/a/x.ts", "src/*/x.ts", "src/b/y.ts", "docs/**", "docs/*.md", "**/x.ts", "src/{a,c}/*.ts", "lib/z.ts"];

test("random operation sequences keep exclusive leases exclusive", () => {
  const r = rng(3);
  let set: LeaseSet = EMPTY_LEASES;
  let granted = 0;
  let refused = 0;
  for (let step = 0; step < 600; step++) {
    const agent = `a${Math.floor(r() * 4)}`;
    const ctx = { actor: actor(agent), now: at(step) };
    const roll = r();
    const pattern = PATTERNS[Math.floor(r() * PATTERNS.length)]!;
    const out =
      roll < 0.7
        ? acquireLeases(set, { patterns: [pattern], exclusive: r() < 0.5, task: null, ttlMs: (5 + Math.floor(r() * 60)) * 1000, reason: null }, ctx)
        : roll < 0.9
          ? releaseLeases(set, { all: true }, ctx)
          : { ok: true as const, ...settleLeases(set, ctx) };
    if (!out.ok) {
      refused++;
      assert.is(out.refusal.code, "held_by_other");
      assert.ok(out.refusal.suggestions?.length === 3);
      continue;
    }
    granted++;
    set = out.record;
    for (const s of out.steps) assert.equal(s.event.at, ctx.now.toISOString(), "time is the parameter, never the clock");
    const live = set.leases.filter((l) => Date.parse(l.expires_at) > ctx.now.getTime());
    for (const x of live) {
      for (const y of live) {
        if (x === y || x.agent === y.agent || !(x.exclusive || y.exclusive)) continue;
        assert.not.ok(overlaps(x.pattern, y.pattern), `step ${step}: ${x.agent} ${x.pattern} (ex ${x.exclusive}) vs ${y.agent} ${y.pattern} (ex ${y.exclusive})`);
      }
    }
  }
  assert.ok(granted > 100 && refused > 50, `both outcomes occur (${granted} / ${refused})`);
});

test("expired leases are swept by the next writer, one lease_expired step per holder", () => {
  let set = EMPTY_LEASES;
  for (const agent of ["a", "b"]) {
    const out = acquireLeases(set, { patterns: [`${agent}.ts`, `${agent}/**`], exclusive: true, task: "t", ttlMs: 1000, reason: null }, { actor: actor(agent), now: at(0) });
    assert.ok(out.ok);
    set = out.record;
  }
  const out = acquireLeases(set, { patterns: ["a.ts"], exclusive: true, task: null, ttlMs: 1000, reason: null }, { actor: actor("c"), now: at(5) });
  assert.ok(out.ok);
  if (!out.ok) return;
  assert.equal(out.steps.map((s) => [s.event.type, s.event.agent, s.event.by, s.event.paths]), [
    ["lease_expired", "a", "c", ["a.ts", "a/**"]],
    ["lease_expired", "b", "c", ["b.ts", "b/**"]],
    ["leased", "c", undefined, ["a.ts"]],
  ]);
  assert.equal(out.record.leases.map((l) => l.agent), ["c"]);
  const gone = releaseTaskLeases(out.record, "t", { actor: actor("c"), now: at(5.5) });
  assert.ok(gone.ok && gone.steps.length === 0, "nothing of task t is left");
});

test("a task's scope lease leased again without --task keeps the claim's expiry: neither cut short nor outliving it", () => {
  // The claim's scope lease: until the claim's expiry, 30 minutes away (as leaseScope takes it).
  const claimEnds = at(1800).toISOString();
  const scope = acquireLeases(EMPTY_LEASES, { patterns: ["src/api/**"], exclusive: true, task: "api", ttlMs: 1800_000, reason: "task api", until: { expiresAt: claimEnds, ttlMs: 1800_000 } }, { actor: actor("a"), now: at(0) });
  assert.ok(scope.ok);
  if (!scope.ok) return;
  for (const ttlMs of [120_000, 3600_000]) {
    // `git handoff lease 'src/api/**' --exclusive --ttl 2m` (or 1h), no --task.
    const again = acquireLeases(scope.record, { patterns: ["src/api/**", "docs/api.md"], exclusive: true, task: null, ttlMs, reason: null }, { actor: actor("a"), now: at(60) });
    assert.ok(again.ok);
    if (!again.ok) return;
    const [doc, api] = [again.record.leases.find((l) => l.pattern === "docs/api.md")!, again.record.leases.find((l) => l.pattern === "src/api/**")!];
    assert.is(api.task, "api", "it still serves the task");
    assert.is(api.expires_at, claimEnds, `with --ttl ${ttlMs / 1000}s it still ends with the claim`);
    assert.is(doc.expires_at, at(60 + ttlMs / 1000).toISOString(), "a free-standing lease takes the TTL asked for");
    // Past the request's TTL but before the claim ends, another agent is still kept out.
    const other = acquireLeases(again.record, { patterns: ["src/api/x.ts"], exclusive: true, task: null, ttlMs: 60_000, reason: null }, { actor: actor("b"), now: at(600) });
    assert.ok(!other.ok && other.refusal.code === "held_by_other");
    // Its `leased` event says when it ends: the claim's expiry, not the TTL the request asked for.
    const alone = acquireLeases(scope.record, { patterns: ["src/api/**"], exclusive: true, task: null, ttlMs, reason: null }, { actor: actor("a"), now: at(60) });
    assert.ok(alone.ok);
    if (alone.ok) assert.is(alone.steps.at(-1)!.event.expires_at, claimEnds);
  }
});

test("check: verdict per lease kind, then the mode", () => {
  let set = EMPTY_LEASES;
  const grant = (agent: string, pattern: string, exclusive: boolean) => {
    const out = acquireLeases(set, { patterns: [pattern], exclusive, task: null, ttlMs: 60_000, reason: null }, { actor: actor(agent), now: at(0) });
    assert.ok(out.ok, pattern);
    if (out.ok) set = out.record;
  };
  grant("a", "api/**", true);
  grant("a", "shared.ts", false);
  grant("a", "docs/**", false);
  const ctx = (mode: "advisory" | "balanced" | "strict") => ({ agent: "me", now: at(1), policy: buildPolicy({ mode, ignore: [] }, "gen/** linguist-generated\n") });
  const verdicts = (mode: "advisory" | "balanced" | "strict") =>
    ["api/x.ts", "shared.ts", "docs/a.md", "free.ts", "gen/a.ts", "yarn.lock", "dist/x.js"].map((p) => checkPath(p, set.leases, ctx(mode)).verdict);
  assert.equal(verdicts("balanced"), ["deny", "warn", "info", "ok", "ok", "ok", "ok"]);
  assert.equal(verdicts("advisory"), ["warn", "warn", "info", "ok", "ok", "ok", "ok"]);
  assert.equal(verdicts("strict"), ["deny", "deny", "info", "ok", "ok", "ok", "ok"]);
  assert.is(checkPath("api/x.ts", set.leases, { ...ctx("balanced"), now: at(120) }).verdict, "ok", "expired leases answer nothing");
  // Through a sync remote another agent's lease stands for the takeover grace past its expiry (at 60 s).
  const grace = (s: number, p = "api/x.ts") => checkPath(p, set.leases, { ...ctx("balanced"), now: at(s), takeoverGraceMs: 60_000 });
  const inside = grace(90);
  assert.is(inside.verdict, "deny");
  assert.is(inside.holders[0]!.grace_until, at(120).toISOString());
  assert.match(inside.message, /held by a until 2026-11-29T10:02:00\.000Z \(in 30s\): it expired 30s ago by this clock, and stands for the takeover grace/);
  assert.match(inside.suggestions[0]!.detail, /the takeover grace past its expiry ends at 2026-11-29T10:02:00\.000Z \(in 30s\)/);
  assert.equal(["shared.ts", "docs/a.md"].map((p) => grace(90, p).verdict), ["warn", "info"]);
  assert.is(grace(120).verdict, "ok", "past the grace, free");
  assert.is(grace(30).holders[0]!.grace_until, undefined, "a live lease is answered as before");
  assert.equal(gitattributesIgnores("# c\n*.pb.go linguist-generated=true\nx -linguist-generated\ny linguist-generated=false\nz handoff-ignore\n"), ["*.pb.go", "z"]);
});

test("ignore globs: a policy's paths ignored exactly as each glob in turn would say, for random globs and paths", () => {
  // isIgnored sorts a policy's globs by shape once (names, folders, plain paths) and asks matchesPath
  // only of the rest: the answer must be the one asking every glob gives.
  const segs = ["src", "dist", "build", "a", "b", "x.ts", "y.md", "yarn.lock", "package-lock.json", "gen", ".hidden", "dist2", "builds"];
  const globs = ["src/gen/", "/a/**", "b/**/x.ts", "*.md", "x.ts", "a/yarn.lock", "**/gen/**", "[ab]/y.md", "{src,lib}/*.ts", "src/*", ".hidden", "dist/x.ts", "**/b/x.ts", "a/b/"];
  const rand = rng(7);
  let ignored = 0;
  let kept = 0;
  const int = (n: number) => Math.floor(rand() * n);
  const pick = <T>(xs: readonly T[]) => xs[int(xs.length)]!;
  for (let round = 0; round < 200; round++) {
    const chosen = Array.from({ length: int(6) }, () => pick(globs));
    const policy = buildPolicy({ mode: "balanced", ignore: chosen }, round % 3 ? null : "gen/** linguist-generated\n*.lock handoff-ignore\n");
    for (let i = 0; i < 40; i++) {
      const path = Array.from({ length: 1 + int(4) }, () => pick(segs)).join("/");
      const want = policy.ignore.some((g) => matchesPath(g, path));
      assert.is(isIgnored(policy, path), want, `${path} against ${JSON.stringify(policy.ignore)}`);
      if (want) ignored++;
      else kept++;
    }
  }
  assert.ok(ignored > 1000 && kept > 1000, `both answers drawn: ${ignored} ignored, ${kept} not`);
  // Every shape is met: the defaults' names and folders, plain paths and other globs.
  const p = buildPolicy({ mode: "balanced", ignore: ["x.ts", "a/yarn.lock", "*.md", "src/gen/"] }, null);
  assert.ok(isIgnored(p, "src/yarn.lock") && isIgnored(p, "dist/a/b") && isIgnored(p, "a/yarn.lock") && isIgnored(p, "q/y.md") && isIgnored(p, "src/gen/z") && isIgnored(p, "b/x.ts"));
  assert.not.ok(isIgnored(p, "dist") || isIgnored(p, "dist2/a") || isIgnored(p, "yarn.lock.txt") || isIgnored(p, "src/gen") || isIgnored(p, "x.tsx"));
});

test("ignore globs: the defaults written out are what the general path makes of them, list and shapes", () => {
  // buildPolicy hands out defaultAnchored(), and shapesOf its shapes, without working them out.
  const general = [...new Set(DEFAULT_IGNORE.map(anchorPattern))].filter((g) => patternProblem(g) === null);
  assert.equal([...defaultAnchored()], general);
  for (const attrs of [null, "", "# nothing marked\n*.png -linguist-generated\n"]) {
    assert.equal(buildPolicy({ mode: "balanced", ignore: [] }, attrs).ignore, general, JSON.stringify(attrs));
  }
  assert.equal(shapesOf(defaultAnchored()), shapesOf([...general]), "the shapes as sorted from a copy of the list");
  // Any glob of the repository's own takes the general path, the defaults first.
  assert.equal(buildPolicy({ mode: "balanced", ignore: ["gen/"] }, null).ignore, [...general, "gen/**"]);
  assert.equal(buildPolicy({ mode: "balanced", ignore: [] }, "x.pb.go linguist-generated\n").ignore, [...general, "**/x.pb.go"]);
});

test.run();
