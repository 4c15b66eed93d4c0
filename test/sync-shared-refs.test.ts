// Refs every agent writes, written on two clones at once: the lease set (one ref for everyone) and
// a memory edited in both. A sync replays this clone's writes on what the other pushed first: no
// lease another clone pushed is dropped, a lease that now clashes with another agent's live
// exclusive lease is a conflict (a tentative one refused), and what lands is history every other
// clone accepts on receive (no event before its parent's).
import { renameSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { storeLease, storeLeaseOffline, storeMemory } from "./support/seed.ts";
import { cloneOf, serveRoot } from "./support/servers.ts";

test.after(cleanupTemp);

function project() {
  const bare = serveRoot().bare("project");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  return { bare, a: cloneOf(bare), b: cloneOf(bare), c: cloneOf(bare) };
}

const ok = (r: ReturnType<typeof cli>) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r;
};

/** `pattern agent` of each lease on the remote, sorted. */
function remoteLeases(bare: string): string[] {
  const text = gitOut(bare, "show", "refs/handoff/leases:leases.json");
  return (JSON.parse(text).leases as { pattern: string; agent: string; exclusive: boolean }[]).map((l) => `${l.pattern} ${l.agent}${l.exclusive ? " exclusive" : ""}`).sort();
}

/** A sync that must accept everything it receives. */
function cleanSync(cwd: string) {
  const r = ok(cli(["sync", "--json"], { cwd }));
  assert.equal(r.json.quarantined ?? [], [], `refused on receive: ${r.stderr}`);
  assert.not.match(r.stderr, /refused on receive|failed validation/);
  return r;
}

test("a shared lease written here and an exclusive lease pushed from another clone: both stay, and every clone takes the result", async () => {
  const { bare, a, b, c } = project();
  // The writes before each sync in-process (support/seed.ts): what the syncs make of them is the subject.
  await storeLease({ cwd: a, agent: "alice", push: true }, ["README.md"]); // a lease history both clones share
  cleanSync(b);
  await storeLease({ cwd: a, agent: "alice" }, ["docs/**"]); // local: travels with the next sync
  await storeLease({ cwd: b, agent: "bob", push: true }, ["src/a.ts"], { exclusive: true });
  const s = cleanSync(a);
  assert.equal(s.json.conflicts, []);
  assert.equal(remoteLeases(bare), ["README.md alice", "docs/** alice", "src/a.ts bob exclusive"]);
  // The clone that pushed first, and a clone seeing the ref for the first time, accept it.
  cleanSync(b);
  cleanSync(c);
  assert.is(cli(["check", "src/a.ts"], { cwd: c, agent: "carol" }).code, 3, "bob's exclusive lease holds everywhere");
  ok(cli(["lease", "src/b.ts", "--exclusive", "--push"], { cwd: b, agent: "bob" }));
  assert.is(cli(["check", "docs/x.md", "--json"], { cwd: c, agent: "carol" }).json.verdict, "info", "alice's shared lease on docs/** is seen there");
});

test("an exclusive lease granted offline that clashes with one another clone pushed: refused at sync, a conflict naming the holder, never two holders", async () => {
  const { bare, a, b } = project();
  await storeLease({ cwd: a, agent: "alice", push: true }, ["README.md"]);
  cleanSync(b);
  // One that clashes with nothing is confirmed.
  renameSync(bare, `${bare}.away`);
  await storeLeaseOffline({ cwd: a, agent: "alice" }, ["docs/**"], { exclusive: true });
  renameSync(`${bare}.away`, bare);
  await storeLease({ cwd: b, agent: "bob", push: true }, ["lib/b.ts"], { exclusive: true });
  assert.match(ok(cli(["sync"], { cwd: a, agent: "alice" })).stdout, /^confirmed: lease of docs\/\*\* by alice$/m);
  // One that clashes with bob's, pushed meanwhile, is refused.
  renameSync(bare, `${bare}.away`);
  await storeLeaseOffline({ cwd: a, agent: "alice" }, ["src/**"], { exclusive: true });
  renameSync(`${bare}.away`, bare);
  await storeLease({ cwd: b, agent: "bob", push: true }, ["src/a.ts"], { exclusive: true });
  const s = ok(cli(["sync"], { cwd: a, agent: "alice" }));
  assert.match(s.stdout, /^refused: {3}lease of src\/\*\* by alice$/m);
  assert.match(s.stdout, /^conflict for alice: exclusive lease on src\/\*\* by alice .* overlaps bob's live exclusive lease on src\/a\.ts$/m);
  assert.not.match(s.stderr, /refused on receive|failed validation/);
  assert.equal(remoteLeases(bare), ["README.md alice", "docs/** alice exclusive", "lib/b.ts bob exclusive", "src/a.ts bob exclusive"]);
  assert.is(cli(["check", "src/a.ts"], { cwd: a, agent: "carol" }).code, 3, "bob holds it here too");
  assert.not.match(cli(["leases"], { cwd: a }).stdout, /src\/\*\*/, "the refused lease is not kept here either");
  cleanSync(b);
  const conflicts = ok(cli(["sync-conflicts", "--json"], { cwd: a, agent: "alice" }));
  const listed = (conflicts.json.conflicts ?? conflicts.json) as { holder?: string }[];
  assert.equal(listed.map((c) => c.holder), ["bob"], conflicts.stdout);
});

test("a lease renewed here while its holder's other clone released another: both writes land", async () => {
  const { bare, a, b } = project();
  await storeLease({ cwd: a, agent: "alice", push: true }, ["src/x.ts"], { ttl: "10m" });
  await storeLease({ cwd: a, agent: "alice", push: true }, ["src/y.ts"]);
  cleanSync(b);
  ok(cli(["unlease", "src/y.ts", "--push"], { cwd: b, agent: "alice" }));
  await storeLease({ cwd: a, agent: "alice" }, ["src/x.ts"], { ttl: "2h" }); // a renewal, local
  cleanSync(a);
  assert.equal(remoteLeases(bare), ["src/x.ts alice"]);
  const x = JSON.parse(gitOut(bare, "show", "refs/handoff/leases:leases.json")).leases[0];
  assert.is(x.ttl_ms, 2 * 3_600_000, "the renewal landed");
  cleanSync(b);
});

test("a memory edited on two clones at once: both versions stay in its history, and every clone accepts the result", async () => {
  const { bare, a, b } = project();
  const id = await storeMemory({ cwd: a, agent: "alice", push: true }, "the cache lasts 60 s");
  cleanSync(b);
  // Alice's edit is the older one: laid on top of bob's, it must not read as written before it.
  ok(cli(["memory", "edit", id, "--text", "the cache lasts 120 s"], { cwd: a, agent: "alice" }));
  ok(cli(["memory", "edit", id, "--text", "the cache lasts 90 s", "--push"], { cwd: b, agent: "bob" }));
  cleanSync(a);
  cleanSync(b);
  const log = gitOut(bare, "log", "--format=%an", `refs/handoff/memories/${id}`).split("\n");
  assert.equal(log, ["alice", "bob", "alice"]);
  const shown = ok(cli(["memory", "show", id, "--json"], { cwd: b })).json;
  assert.is(shown.text, ok(cli(["memory", "show", id, "--json"], { cwd: a })).json.text, "both clones agree");
});

test.run();
