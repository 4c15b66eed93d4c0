// File leases through the CLI: lease / unlease / leases / check, racing exclusive leases, lazy
// expiry, renewal by activity, task scopes leased in the claim's own transaction, and policy.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { overlaps } from "../src/core/glob-overlap.ts";
import { cleanupTemp, cli, cliAsync, gitOut, handoffRefs, tempRepo } from "./support/repo.ts";
import { storeClaim, storeDone, storeLease, storeTasks } from "./support/seed.ts";
import { leaseCacheFile } from "../src/store/lease-cache-file.ts";

test.after(cleanupTemp);

test("lease, leases, check, unlease: answers per path with holder, task, expiry and suggestions", () => {
  const repo = tempRepo();
  const a = cli(["lease", "src/api/**", "--exclusive", "--task", "api", "--reason", "rewrite", "--json"], { cwd: repo, agent: "alice" });
  assert.is(a.code, 0, a.stderr);
  assert.is(a.json.leased[0].pattern, "src/api/**");
  assert.is(a.json.leased[0].exclusive, true);
  assert.is(a.json.leased[0].task, "api");
  assert.ok(cli(["lease", "src/shared.ts", "docs/"], { cwd: repo, agent: "alice" }).code === 0);

  const c = cli(["check", "src/api/users.ts", "src/shared.ts", "docs/x.md", "src/free.ts", "--json"], { cwd: repo, agent: "bob" });
  assert.is(c.code, 3, "a deny makes check exit 3");
  assert.equal(c.json.paths.map((p: { verdict: string }) => p.verdict), ["deny", "warn", "info", "ok"]);
  const deny = c.json.paths[0];
  assert.is(deny.holders[0].agent, "alice");
  assert.is(deny.holders[0].task, "api");
  assert.ok(Date.parse(deny.holders[0].expires_at) > Date.now());
  assert.equal(deny.suggestions.map((s: { action: string }) => s.action), ["wait", "negotiate", "work_elsewhere"]);
  assert.match(deny.suggestions[1].detail, /task api \(git handoff task show api\)/);
  assert.is(c.json.paths[2].holders[0].pattern, "docs/**");

  const ok = cli(["check", "src/shared.ts"], { cwd: repo, agent: "bob" });
  assert.is(ok.code, 0, "warn alone exits 0");
  assert.match(ok.stdout, /^warn  src\/shared\.ts is leased by alice/);
  assert.is(cli(["check", "src/api/x.ts"], { cwd: repo, agent: "alice" }).code, 0, "your own lease never stands in your way");

  const bob = cli(["lease", "src/api/users.ts"], { cwd: repo, agent: "bob" });
  assert.is(bob.code, 3);
  assert.match(bob.stderr, /overlaps an exclusive lease on src\/api\/\*\* held by alice for task api/);
  assert.is(cli(["lease", "src/shared.ts"], { cwd: repo, agent: "bob" }).code, 0, "shared leases coexist");
  assert.is(cli(["lease", "src/shared.ts", "--exclusive"], { cwd: repo, agent: "carol" }).code, 3, "exclusive needs nobody else on it");

  const mine = cli(["leases", "--agent", "alice", "--json"], { cwd: repo });
  assert.equal(mine.json.map((l: { pattern: string }) => l.pattern), ["docs/**", "src/api/**", "src/shared.ts"]);
  // Before the verb, --agent names the caller; it does not filter the listing.
  const asCaller = cli(["--agent", "alice", "leases", "--json"], { cwd: repo });
  assert.ok(asCaller.json.some((l: { agent: string }) => l.agent === "bob"), "bob's shared lease is listed too");
  const notMine = cli(["unlease", "src/api/**"], { cwd: repo, agent: "bob" });
  assert.is(notMine.code, 3);
  assert.match(notMine.stderr, /held by alice/);
  const un = cli(["unlease", "src/api/**", "--json"], { cwd: repo, agent: "alice" });
  assert.is(un.code, 0, un.stderr);
  assert.equal(un.json.released, ["src/api/**"]);
  assert.is(cli(["check", "src/api/users.ts"], { cwd: repo, agent: "bob" }).code, 0);
  const log = gitOut(repo, "log", "--format=%an %s", "refs/handoff/leases").split("\n");
  assert.match(log[0]!, /^alice unleased src\/api\/\*\* by alice/);
});

test("lease --task refuses a finished task and one another agent holds, writing nothing; a task not here yet or held by the caller is fine", async () => {
  const repo = tempRepo();
  const as = (agent: string, args: string[]) => cli(args, { cwd: repo, agent });
  await storeTasks({ cwd: repo, agent: "lead" }, ["fin", "held", "mine"].map((id) => ({ id, objective: id })));
  await storeDone({ cwd: repo, agent: "lead" }, "fin");
  await storeClaim({ cwd: repo, agent: "bob" }, "held");
  await storeClaim({ cwd: repo, agent: "alice" }, "mine");
  const before = handoffRefs(repo);
  const fin = as("alice", ["lease", "src/a.ts", "--task", "fin", "--json"]);
  assert.is(fin.code, 3, fin.stderr);
  assert.is(fin.json.error.code, "final_state");
  assert.match(fin.json.error.message, /task fin is done/);
  const held = as("alice", ["lease", "src/a.ts", "--task", "held"]);
  assert.is(held.code, 3);
  assert.match(held.stderr, /^git-handoff: task held is held by bob /);
  assert.is(handoffRefs(repo), before, "nothing written");
  // for a task the caller holds: one write, the lease expiring with the claim
  const commits = () => (gitOut(repo, "for-each-ref", "refs/handoff/leases") ? Number(gitOut(repo, "rev-list", "--count", "refs/handoff/leases")) : 0);
  const n = commits();
  const mine = as("alice", ["lease", "src/a.ts", "--exclusive", "--task", "mine", "--json"]);
  assert.is(mine.code, 0, mine.stderr);
  assert.is(commits(), n + 1, "one commit, one leased event");
  const claim = as("alice", ["task", "show", "mine", "--json"]).json.claim;
  assert.equal([mine.json.leased[0].expires_at, mine.json.leased[0].ttl_ms, mine.json.leased[0].exclusive], [claim.expires_at, claim.ttl_ms, true]);
  const later = as("alice", ["lease", "src/b.ts", "--task", "later", "--json"]);
  assert.is(later.code, 0, "a task not here (yet) stands on the lease's own TTL");
  assert.is(later.json.task_not_found, "later");
  assert.match(as("alice", ["lease", "src/b.ts", "--task", "later"]).stderr, /no task later here \(a typo, or not synced yet\)/);
  assert.is(as("bob", ["lease", "src/c.ts", "--task", "held"]).code, 0, "the holder leases for its task");
});

test("16 processes racing for overlapping exclusive leases: exactly one wins, each round", async () => {
  const repo = tempRepo();
  const globs = ["src/**", "src/a/**", "src/a/x.ts", "src/*/x.ts", "src/a/*.ts", "**/x.ts", "src/{a,b}/**", "src/a/?.ts"];
  for (let round = 0; round < 3; round++) {
    const before = cli(["leases", "--json"], { cwd: repo }).json.length;
    const runs = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        cliAsync(["lease", globs[i % globs.length]!.replace("src", `r${round}/src`).replace("**/x.ts", `r${round}/**/x.ts`), "--exclusive", "--json"], {
          cwd: repo,
          agent: `agent-${round}-${i}`,
        }),
      ),
    );
    const winners = runs.filter((r) => r.code === 0);
    assert.is(winners.length, 1, runs.map((r) => `${r.code} ${r.stderr}`).join("\n"));
    for (const r of runs.filter((r) => r.code !== 0)) assert.is(r.code, 3, r.stderr);
    assert.is(cli(["leases", "--json"], { cwd: repo }).json.length, before + 1);
  }
  const all: { pattern: string; agent: string; exclusive: boolean }[] = cli(["leases", "--json"], { cwd: repo }).json;
  for (const x of all) for (const y of all) if (x !== y && x.agent !== y.agent) assert.not.ok(overlaps(x.pattern, y.pattern), `${x.pattern} / ${y.pattern}`);
});

test("expiry is lazy; the next writer records lease_expired; a holder's activity renews its leases", () => {
  const repo = tempRepo();
  // The scripted clock: each call says when it happens, so no machine load can move an expiry.
  const t0 = Date.parse("2026-06-01T10:00:00Z");
  const at = (s: number) => ({ HANDOFF_NOW: new Date(t0 + s * 1000).toISOString() });
  assert.is(cli(["lease", "a.ts", "--exclusive", "--ttl", "4s"], { cwd: repo, agent: "alice", env: at(0) }).code, 0);
  assert.is(cli(["check", "a.ts"], { cwd: repo, agent: "bob", env: at(1) }).code, 3);
  assert.is(cli(["lease", "b.ts", "--ttl", "20s"], { cwd: repo, agent: "carol", env: at(1) }).code, 0);
  assert.is(cli(["check", "a.ts"], { cwd: repo, agent: "bob", env: at(5) }).code, 0, "an expired lease is free to readers");
  const bOf = (s: number) => cli(["leases", "--agent", "carol", "--json"], { cwd: repo, env: at(s) }).json.find((l: { pattern: string }) => l.pattern === "b.ts").expires_at;
  const carolBefore = bOf(5);
  // Activity renews a holder's leases once they are a third through their time (b.ts: 20 s from
  // t=1, so from t=7.7 on), as its pre-edit hooks do: not at every write, which rewrote each of an
  // agent's leases with each new one.
  assert.is(cli(["lease", "c.ts", "--ttl", "3s"], { cwd: repo, agent: "carol", env: at(6) }).code, 0);
  assert.is(bOf(6), carolBefore, "b.ts is not yet a third through: left as it is");
  assert.is(cli(["lease", "d.ts", "--ttl", "3s"], { cwd: repo, agent: "carol", env: at(8) }).code, 0);
  assert.ok(Date.parse(bOf(8)) > Date.parse(carolBefore), "carol's b.ts lease was renewed by her activity");
  const log = gitOut(repo, "log", "--format=%s", "refs/handoff/leases").split("\n");
  assert.match(log[2]!, /^lease_expired a\.ts: lease of alice ran out \(seen by carol\)/);
  assert.is(cli(["lease", "a.ts", "--exclusive"], { cwd: repo, agent: "bob", env: at(7) }).code, 0);
});

test("claiming a task leases its scope in the same transaction; finishing releases it", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, [
    { id: "api", objective: "api work", scope: ["src/api/"], exclusive: true },
    { id: "users", objective: "users", scope: ["src/api/users.ts"] },
  ]);
  const claim = cli(["claim", "api", "--json"], { cwd: repo, agent: "alice" });
  assert.is(claim.code, 0, claim.stderr);
  const leases = cli(["leases", "--json"], { cwd: repo }).json;
  assert.equal(leases.map((l: { pattern: string; task: string; exclusive: boolean; expires_at: string }) => [l.pattern, l.task, l.exclusive, l.expires_at]), [
    ["src/api/**", "api", true, claim.json.claim.expires_at],
  ]);
  // The claim and the lease are one commit each on two refs, written by one transaction.
  assert.match(gitOut(repo, "log", "-1", "--format=%s", "refs/handoff/leases"), /^leased src\/api\/\*\* to alice \(exclusive\) for api/);

  const before = handoffRefs(repo);
  const refused = cli(["claim", "users"], { cwd: repo, agent: "bob" });
  assert.is(refused.code, 3);
  assert.match(refused.stderr, /src\/api\/users\.ts overlaps an exclusive lease on src\/api\/\*\* held by alice for task api/);
  assert.is(handoffRefs(repo), before, "a refused claim moves neither ref");

  assert.is(cli(["done", "api"], { cwd: repo, agent: "alice" }).code, 0);
  assert.equal(cli(["leases", "--json"], { cwd: repo }).json, []);
  assert.match(gitOut(repo, "log", "-1", "--format=%s", "refs/handoff/leases"), /^unleased src\/api\/\*\* by alice \(api\)/);
  assert.is(cli(["claim", "users"], { cwd: repo, agent: "bob" }).code, 0);
  assert.equal(cli(["leases", "--json"], { cwd: repo }).json.map((l: { exclusive: boolean }) => l.exclusive), [false], "shared by default");
  assert.is(cli(["release", "users"], { cwd: repo, agent: "bob" }).code, 0);
  assert.equal(cli(["leases", "--json"], { cwd: repo }).json, []);
});

test("a claim whose lease ref is locked changes neither ref (one transaction, not two writes)", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "t", objective: "t", scope: ["src/**"] }]);
  await storeLease({ cwd: repo, agent: "z" }, ["other.ts"]);
  const before = handoffRefs(repo);
  const lock = `${repo}/.git/refs/handoff/leases.lock`;
  writeFileSync(lock, "");
  try {
    const r = cli(["claim", "t"], { cwd: repo, agent: "alice" });
    assert.is(r.code, 3, r.stderr);
    assert.match(r.stderr, /the lock file .*refs\/handoff\/leases\.lock \(\d+ s old\) stayed in place through every retry/);
    assert.is(handoffRefs(repo), before);
  } finally {
    rmSync(lock);
  }
  assert.is(cli(["claim", "t"], { cwd: repo, agent: "alice" }).code, 0);
});

test("policy: ignore defaults, .gitattributes markings, config keys; a bad config names its line", async () => {
  const repo = tempRepo();
  writeFileSync(`${repo}/.gitattributes`, "gen/** linguist-generated\nschema.json handoff-ignore=true\nkeep.txt linguist-generated=false\n");
  writeFileSync(`${repo}/.handoff.yaml`, "ignore:\n  - '*.snap'\nexclusive_scope: true\nlease_ttl: 2h\n");
  const r = cli(["lease", "package-lock.json", "dist/app.js", "gen/x.ts", "sub/schema.json", "a.snap", "keep.txt", "--json"], { cwd: repo, agent: "alice" });
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.json.ignored, ["package-lock.json", "dist/app.js", "gen/x.ts", "sub/schema.json", "a.snap"]);
  assert.equal(r.json.leased.map((l: { pattern: string }) => l.pattern), ["keep.txt"]);
  const ttl = Date.parse(r.json.leased[0].expires_at) - Date.parse(r.json.leased[0].acquired_at);
  assert.is(ttl, 2 * 3600_000);
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "t", objective: "t", scope: ["lib/**"] }]);
  assert.is(cli(["claim", "t"], { cwd: repo, agent: "alice" }).code, 0);
  assert.is(cli(["leases", "--json"], { cwd: repo }).json.find((l: { pattern: string }) => l.pattern === "lib/**").exclusive, true, "exclusive_scope");

  const before = handoffRefs(repo);
  const bad: [string, RegExp][] = [
    ["mode: sometimes\n", /\.handoff\.yaml line 1: mode: /],
    ["claim_ttl: 5m\nignore: [a, 3]\n", /\.handoff\.yaml line 2: ignore\.1: /],
    ["auto_lease: yes please\n", /\.handoff\.yaml line 1: auto_lease/],
    ["lease_ttl: soon\n", /\.handoff\.yaml line 1: invalid lease_ttl/],
    ["mode: strict\n  bad indent: [\n", /\.handoff\.yaml line \d+: /],
  ];
  for (const [text, message] of bad) {
    writeFileSync(`${repo}/.handoff.yaml`, text);
    const c = cli(["lease", "x.ts"], { cwd: repo, agent: "bob" });
    assert.is(c.code, 2, text);
    assert.match(c.stderr, message, text);
  }
  assert.is(handoffRefs(repo), before);
  // A key this build does not know (mixed versions share the file) warns and is ignored.
  writeFileSync(`${repo}/.handoff.yaml`, "exclusive_scop: true\n");
  const w = cli(["leases"], { cwd: repo, agent: "bob" });
  assert.is(w.code, 0, w.stderr);
  assert.match(w.stderr, /\.handoff\.yaml line 1: unknown key "exclusive_scop" ignored/);
});

test("leasing an existing folder by name leases what is inside it", () => {
  const repo = tempRepo();
  mkdirSync(`${repo}/lib/deep`, { recursive: true });
  const r = cli(["lease", "lib", "--json"], { cwd: `${repo}/lib/deep`.replace("/lib/deep", ""), agent: "alice" });
  assert.is(r.code, 0, r.stderr);
  assert.equal(r.json.leased.map((l: { pattern: string }) => l.pattern), ["lib/**"]);
  const sub = cli(["lease", "../x.ts", "--json"], { cwd: `${repo}/lib/deep`, agent: "alice" });
  assert.equal(sub.json.leased.map((l: { pattern: string }) => l.pattern), ["lib/x.ts"], "paths are read from the folder the command runs in");
  assert.is(cli(["check", "lib/deep/a.ts"], { cwd: repo, agent: "bob" }).code, 0);
  assert.match(cli(["check", "lib/deep/a.ts"], { cwd: repo, agent: "bob" }).stdout, /^info  lib\/deep\/a\.ts is inside lib\/\*\*, leased by alice/);
});

/** A repository where alice holds a.ts (written in-process) and bob's check of it has left the lease cache. */
async function leasedAndChecked(): Promise<{ repo: string; cache: string; tip: string }> {
  const repo = tempRepo();
  await storeLease({ cwd: repo, agent: "alice" }, ["a.ts"], { exclusive: true });
  assert.is(cli(["check", "a.ts"], { cwd: repo, agent: "bob" }).code, 3);
  return { repo, cache: leaseCacheFile(`${repo}/.git`), tip: gitOut(repo, "rev-parse", "refs/handoff/leases") };
}

test("the tip-keyed cache never answers for another tip; a corrupt lease ref is a clear error", async () => {
  const { repo, cache, tip } = await leasedAndChecked();
  writeFileSync(cache, `${tip}\n{not json`);
  assert.is(cli(["check", "a.ts"], { cwd: repo, agent: "bob" }).code, 3, "a torn cache falls back to the real record");
  assert.is(cli(["unlease", "a.ts"], { cwd: repo, agent: "alice" }).code, 0);
  writeFileSync(cache, `${tip}\n{"leases": []}`);
  assert.is(cli(["lease", "a.ts", "--exclusive"], { cwd: repo, agent: "alice" }).code, 0);
  assert.is(cli(["check", "a.ts"], { cwd: repo, agent: "bob" }).code, 3, "a cache of an older tip is ignored");

  const blob = gitOut(repo, "hash-object", "-w", "--stdin");
  gitOut(repo, "update-ref", "refs/handoff/leases", blob);
  const before = handoffRefs(repo);
  const r = cli(["check", "a.ts"], { cwd: repo, agent: "bob" });
  assert.is(r.code, 2);
  assert.match(r.stderr, /refs\/handoff\/leases is corrupt/);
  assert.is(cli(["lease", "b.ts"], { cwd: repo, agent: "bob" }).code, 2);
  assert.is(handoffRefs(repo), before);
});

test("the lease cache names the stored format: a writer on a cache hit reads no lease object, and a cache without it still works", async () => {
  const { repo, cache, tip } = await leasedAndChecked();
  assert.ok(readFileSync(cache, "utf8").startsWith(`${tip}\n#format 1\n`), "tip, then the format");
  // With the lease commit's tree unreadable, only the cache can answer: a writer (a second lease)
  // still works. (Unreadable, not gone: a cache the writer of the tip left is used only while the
  // objects it wrote are there, since a prune may remove them before the ref points at them.)
  const tree = gitOut(repo, "rev-parse", "refs/handoff/leases^{tree}");
  const loose = `${repo}/.git/objects/${tree.slice(0, 2)}/${tree.slice(2)}`;
  const kept = readFileSync(loose);
  rmSync(loose);
  writeFileSync(loose, "not a zlib stream");
  assert.is(cli(["lease", "b.ts", "--exclusive"], { cwd: repo, agent: "alice" }).code, 0, "the writer took its format from the cache");
  rmSync(loose);
  writeFileSync(loose, kept);
  assert.is(cli(["check", "a.ts", "b.ts"], { cwd: repo, agent: "bob" }).code, 3);
  // A cache an older git-handoff wrote (no format line) is read, and the format learned from the objects.
  const now = gitOut(repo, "rev-parse", "refs/handoff/leases");
  const text = readFileSync(cache, "utf8");
  writeFileSync(cache, text.replace(/^([0-9a-f]+)\n#format \d\n/, "$1\n"));
  assert.ok(readFileSync(cache, "utf8").startsWith(`${now}\n`) && !readFileSync(cache, "utf8").includes("#format"));
  assert.is(cli(["lease", "c.ts", "--exclusive"], { cwd: repo, agent: "alice" }).code, 0);
  assert.is(cli(["check", "c.ts"], { cwd: repo, agent: "bob" }).code, 3);
  assert.is(gitOut(repo, "fsck", "--no-progress").trim(), "");
});

test.run();
