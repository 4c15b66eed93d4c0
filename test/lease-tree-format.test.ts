// The lease set stored as a tree (format 3): a set converts on the write that brings it to 64
// leases, reads the same as before, a claim then rewrites only the prefix file it changes (a folder
// of many leases is spread over several files), a format 2 record (one file per folder) reads the
// same and is written over in format 3, a received tree is checked like the one-file record, and a
// format this build does not know is refused as "from a newer git-handoff", never read as empty.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { loadLeases } from "../src/store/lease-store.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { commit, eventMessage, setRef, tree } from "./support/forge.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { cloneOf, serveRoot } from "./support/servers.ts";
import { storeLease, storeSync, storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

const ok = (r: ReturnType<typeof cli>) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r;
};
/** A sync that kept refs of the remote back: its report, with exit 3 (code quarantined). */
const kept = (r: ReturnType<typeof cli>) => {
  assert.is(r.code, 3, `${r.stdout}\n${r.stderr}`);
  return r;
};
const files = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `pkg${from + i}/f.ts`);
const leasesOf = (repo: string) => ok(cli(["leases", "--json"], { cwd: repo, agent: "lead" })).json as { pattern: string; agent: string }[];
const show = (repo: string, spec: string) => gitOut(repo, "cat-file", "-p", spec);
const treeNames = (repo: string, spec: string) => gitOut(repo, "ls-tree", "--name-only", spec).split("\n").filter(Boolean);

test("a lease set converts to a tree on the write that brings it to 64 leases, and reads the same", () => {
  const repo = tempRepo();
  ok(cli(["lease", ...files(63)], { cwd: repo, agent: "alice" }));
  assert.equal(treeNames(repo, "refs/handoff/leases"), ["format", "leases.json"], "63 leases: one file, format 1");
  const before = leasesOf(repo);
  ok(cli(["lease", "pkg99/x.ts", "--exclusive"], { cwd: repo, agent: "bob" }));
  assert.equal(treeNames(repo, "refs/handoff/leases"), ["format", "leases"]);
  assert.is(show(repo, "refs/handoff/leases:format"), "git-handoff 3");
  assert.is(treeNames(repo, "refs/handoff/leases:leases").length, 64, "one file per first folder");
  const after = leasesOf(repo);
  assert.is(after.length, 64);
  assert.equal(after.filter((l) => l.agent === "alice"), before, "alice's leases read back as they were");
  // The tree answers checks as the file did.
  assert.is(cli(["check", "pkg99/x.ts"], { cwd: repo, agent: "carol" }).code, 3, "bob's exclusive lease still denies carol");
  assert.is(cli(["check", "pkg5/f.ts"], { cwd: repo, agent: "carol" }).code, 0);
  // Shrinking below the threshold keeps the tree: a clone never sees the format flip back.
  ok(cli(["unlease", ...files(10)], { cwd: repo, agent: "alice" }));
  assert.is(show(repo, "refs/handoff/leases:format"), "git-handoff 3");
  assert.is(leasesOf(repo).length, 54);
  const doctor = cli(["doctor", "--json"], { cwd: repo, agent: "lead" });
  const format = (doctor.json?.checks ?? []).find((c: { name: string }) => c.name === "format");
  assert.ok(format, doctor.stdout);
  assert.is(format.status, "ok", JSON.stringify(format));
});

test("a claim on a tree rewrites only the prefix file of its scope", async () => {
  const repo = tempRepo();
  await storeLease({ cwd: repo, agent: "alice" }, files(70));
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "w", objective: "work", scope: ["pkg3/**"] }]);
  const old = gitOut(repo, "rev-parse", "refs/handoff/leases");
  ok(cli(["claim", "w"], { cwd: repo, agent: "bob" }));
  const changed = gitOut(repo, "diff-tree", "-r", "--name-only", old, "refs/handoff/leases").split("\n").filter(Boolean);
  assert.equal(changed, ["leases/pkg3.json"]);
  const stored = show(repo, "refs/handoff/leases:leases/pkg3.json");
  assert.match(stored, /"pattern":"pkg3\/\*\*","agent":"bob","task":"w"/);
  ok(cli(["done", "w"], { cwd: repo, agent: "bob" }));
  assert.not.match(show(repo, "refs/handoff/leases:leases/pkg3.json"), /"task":"w"/, "done releases the scope lease in the same file");
});

test("a long-running process sees another process's lease change at once, and writes on top of it", async () => {
  const repo = tempRepo();
  await storeLease({ cwd: repo, agent: "alice" }, files(70));
  const store = await openSyncedStore({ cwd: repo, agent: "server", warm: true });
  try {
    assert.is((await loadLeases(store)).set.leases.length, 70);
    ok(cli(["lease", "pkg5/other.ts", "--exclusive"], { cwd: repo, agent: "bob" }));
    const seen = (await loadLeases(store)).set.leases;
    assert.ok(seen.some((l) => l.pattern === "pkg5/other.ts" && l.agent === "bob"), "the index follows the new tip");
    ok(cli(["task", "add", "work", "--id", "w", "--scope", "pkg5/other.ts"], { cwd: repo, agent: "lead" }));
    const { claim } = await import("../src/store/task-actions.ts");
    const refused = await claim(store, "w").then(() => null, (e: Error) => e);
    assert.match(refused?.message ?? "granted", /held by bob/, "the foreign lease counts in the server's decision");
    ok(cli(["unlease", "pkg5/other.ts"], { cwd: repo, agent: "bob" }));
    const t = await claim(store, "w");
    assert.is(t.claim?.agent, "server");
    const now = leasesOf(repo);
    assert.is(now.length, 71, "the server's write kept every lease of the tip it wrote on");
    assert.ok(now.some((l) => l.pattern === "pkg5/other.ts" && l.agent === "server"));
  } finally {
    store.close();
  }
});

test("an agent holding many leases that leases one more rewrites only that prefix file, until its leases are a third through", () => {
  const repo = tempRepo();
  const t0 = Date.parse("2026-06-01T10:00:00Z");
  const at = (s: number) => ({ HANDOFF_NOW: new Date(t0 + s * 1000).toISOString() });
  ok(cli(["lease", ...files(90), "--ttl", "30m"], { cwd: repo, agent: "alice", env: at(0) }));
  let old = gitOut(repo, "rev-parse", "refs/handoff/leases");
  ok(cli(["lease", "extra/x.ts", "--ttl", "30m"], { cwd: repo, agent: "alice", env: at(60) }));
  const changed = gitOut(repo, "diff-tree", "-r", "--name-only", old, "refs/handoff/leases").split("\n").filter(Boolean);
  assert.equal(changed, ["leases/extra.json"], "her 90 other leases are left as they are");
  // Eleven minutes in (past a third of 30 m), her next write renews them all at once.
  old = gitOut(repo, "rev-parse", "refs/handoff/leases");
  ok(cli(["lease", "more/x.ts", "--ttl", "30m"], { cwd: repo, agent: "alice", env: at(660) }));
  const renewed = gitOut(repo, "diff-tree", "-r", "--name-only", old, "refs/handoff/leases").split("\n").filter(Boolean);
  assert.is(renewed.length, 92, "90 + extra renewed, more added");
  const leases = leasesOf(repo).filter((l) => l.agent === "alice") as unknown as { expires_at: string }[];
  assert.ok(leases.every((l) => l.expires_at === new Date(t0 + 660_000 + 30 * 60_000).toISOString()), "all run 30 m from the renewal");
});

test("a lease record in a format this build does not know is refused, never read as empty", async () => {
  const repo = tempRepo();
  await storeLease({ cwd: repo, agent: "alice" }, ["src/a.ts"], { exclusive: true });
  const leases = tree(repo, { "src.json": `{"leases": []}\n` });
  const future = commit(repo, { tree: tree(repo, { format: "git-handoff 4\n", leases: { tree: leases } }), author: "alice", message: eventMessage({ type: "leased", agent: "alice", at: new Date().toISOString() }) });
  setRef(repo, "refs/handoff/leases", future);
  const r = cli(["check", "src/a.ts"], { cwd: repo, agent: "bob" });
  assert.is.not(r.code, 0, "a check does not answer as if nothing were leased");
  assert.match(r.stderr + r.stdout, /newer git-handoff/);
  const l = cli(["leases"], { cwd: repo, agent: "bob" });
  assert.is.not(l.code, 0);
  assert.match(l.stderr, /newer git-handoff/);
});

test("on receive a lease tree is checked like the one file; a newer format is kept back as newer", async () => {
  const bare = serveRoot().bare("project");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const a = cloneOf(bare);
  const b = cloneOf(bare);
  await storeLease({ cwd: a, agent: "alice" }, files(70), { exclusive: true });
  await storeSync({ cwd: a, agent: "alice" });
  await storeSync({ cwd: b, agent: "bob" });
  assert.is(leasesOf(b).length, 70, "a valid tree arrives");
  assert.is(cli(["check", "pkg1/f.ts"], { cwd: b, agent: "bob" }).code, 3);

  // A hostile tree: an exclusive ** over alice's live leases, filed where globs go.
  const tip = gitOut(bare, "rev-parse", "refs/handoff/leases");
  const now = new Date();
  const grab = { pattern: "**", agent: "mallory", task: null, exclusive: true, acquired_at: now.toISOString(), expires_at: new Date(now.getTime() + 60_000).toISOString(), ttl_ms: 60_000, reason: null, worktree: null, branch: null, scope: "primary" };
  const entries: Record<string, string> = {};
  for (const name of treeNames(bare, `${tip}:leases`)) entries[name] = show(bare, `${tip}:leases/${name}`) + "\n";
  entries["*.json"] = `{"leases": [\n${JSON.stringify(grab)}\n]}\n`;
  const event = { type: "leased", task: "", agent: "mallory", at: now.toISOString(), scope: "primary", worktree: null, branch: null, paths: ["**"], exclusive: true };
  const forged = commit(bare, { tree: tree(bare, { format: "git-handoff 3\n", leases: { tree: tree(bare, entries) } }), parent: tip, author: "mallory", message: eventMessage(event) });
  setRef(bare, "refs/handoff/leases", forged);
  let s = kept(cli(["sync", "--json"], { cwd: b, agent: "bob" }));
  let q = (s.json.quarantined as { ref: string; kind: string; reason: string }[]).find((x) => x.ref === "refs/handoff/leases");
  assert.ok(q, JSON.stringify(s.json));
  assert.is(q!.kind, "invalid");
  assert.match(q!.reason, /overlaps alice's live lease/);
  assert.is(leasesOf(b).length, 70, "nothing of the forged tree entered refs/handoff/");

  // Trees refused by what is wrong in their prefix files: a lease filed under another prefix than
  // its own (it would hide from filtered readers), a folder among the files, and a file named
  // beyond ASCII (the quick reading of plain ASCII files hands the last two to the entry-by-entry
  // one, which names them).
  const lease = (pattern: string) => `{"leases": [\n${JSON.stringify({ ...grab, pattern, agent: "alice", exclusive: false })}\n]}\n`;
  for (const [extra, why] of [
    [{ "pkg1.json": lease("pkg2/x.ts") }, /filed under pkg1\.json/],
    [{ "pkg1.json": { tree: tree(bare, { "x.json": "{}\n" }) } }, /leases\/"pkg1\.json" is not a plain file/],
    [{ "pkgé.json": lease("pkgé/x.ts") }, /pkgé\.json/],
    // Past the family's 4 MB a file: refused by its size (measured before it is read).
    [{ "pkg1.json": lease("pkg1/x.ts") + " ".repeat(5 * 1024 * 1024) }, /leases\/pkg1\.json is \d+ bytes; at most 4194304/],
  ] as const) {
    const odd = { ...entries, ...extra } as Record<string, string>;
    delete odd["*.json"];
    const bad = commit(bare, { tree: tree(bare, { format: "git-handoff 3\n", leases: { tree: tree(bare, odd) } }), parent: tip, author: "alice", message: eventMessage({ ...event, agent: "alice", paths: ["pkg1/x.ts"] }) });
    setRef(bare, "refs/handoff/leases", bad);
    s = kept(cli(["sync", "--json"], { cwd: b, agent: "bob" }));
    q = (s.json.quarantined as { ref: string; kind: string; reason: string }[]).find((x) => x.ref === "refs/handoff/leases");
    assert.ok(q, JSON.stringify(s.json));
    assert.match(q!.reason, why, q!.reason);
    assert.is(leasesOf(b).length, 70, "nothing of the bad tree entered refs/handoff/");
  }

  // The next format: reported as newer, kept under the tracking refs, the local set untouched.
  const future = commit(bare, { tree: tree(bare, { format: "git-handoff 4\n", leases: { tree: tree(bare, { "x.json": "{}\n" }) } }), parent: tip, author: "alice", message: eventMessage({ ...event, agent: "alice" }) });
  setRef(bare, "refs/handoff/leases", future);
  const text = kept(cli(["sync"], { cwd: b, agent: "bob" }));
  assert.match(text.stdout + text.stderr, /from a newer git-handoff: refs\/handoff\/leases/, text.stdout + text.stderr);
  s = kept(cli(["sync", "--json"], { cwd: b, agent: "bob" }));
  q = (s.json.quarantined as { ref: string; kind: string; reason: string }[]).find((x) => x.ref === "refs/handoff/leases");
  assert.ok(q, JSON.stringify(s.json));
  assert.is(q!.kind, "newer");
  assert.is(leasesOf(b).length, 70);
});

test("a folder of many leases is spread over several files: a claim in it rewrites one of them", async () => {
  const repo = tempRepo();
  // 200 leases all under src/, as in a repository whose code is all there.
  for (const from of [0, 100]) ok(cli(["lease", ...Array.from({ length: 100 }, (_, i) => `src/m${from + i}/f.ts`)], { cwd: repo, agent: "alice" }));
  const names = treeNames(repo, "refs/handoff/leases:leases");
  assert.ok(names.length >= 4 && names.every((n) => /^src~\d+~\d+\.json$/.test(n)), names.join(" "));
  assert.is(new Set(names.map((n) => n.split("~")[1])).size, 1, "one bucket count for the folder");
  const sizes = names.map((n) => (show(repo, `refs/handoff/leases:leases/${n}`).match(/"pattern"/g) ?? []).length);
  assert.is(sizes.reduce((a, b) => a + b, 0), 200);
  assert.ok(Math.max(...sizes) <= 64, `files of at most a few dozen leases: ${sizes.join(" ")}`);
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "w", objective: "work", scope: ["src/new/**"] }]);
  const old = gitOut(repo, "rev-parse", "refs/handoff/leases");
  ok(cli(["claim", "w"], { cwd: repo, agent: "bob" }));
  const changed = gitOut(repo, "diff-tree", "-r", "--name-only", old, "refs/handoff/leases").split("\n").filter(Boolean);
  assert.is(changed.length, 1, changed.join(" "));
  assert.match(show(repo, `refs/handoff/leases:${changed[0]}`), /"pattern":"src\/new\/\*\*","agent":"bob","task":"w"/);
  // Read back whole, and answered as before.
  assert.is(leasesOf(repo).length, 201);
  assert.is(cli(["check", "src/m7/f.ts"], { cwd: repo, agent: "carol" }).code, 0, "alice's leases are not exclusive: carol is told, not denied");
  assert.is(cli(["lease", "src/m7/f.ts", "--exclusive"], { cwd: repo, agent: "dave" }).code, 3, "alice's lease, read from its bucket, stands in the way");
  ok(cli(["lease", "src/solo/x.ts", "--exclusive"], { cwd: repo, agent: "dave" }));
  assert.is(cli(["check", "src/solo/x.ts"], { cwd: repo, agent: "carol" }).code, 3);
  gitOut(repo, "fsck", "--strict", "--no-dangling");
});

test("a format 2 record (one file per folder) reads the same, and the next write is format 3", () => {
  const repo = tempRepo();
  ok(cli(["lease", ...Array.from({ length: 100 }, (_, i) => `src/m${i}/f.ts`)], { cwd: repo, agent: "alice" }));
  ok(cli(["lease", ...files(10)], { cwd: repo, agent: "alice" }));
  const tip = gitOut(repo, "rev-parse", "refs/handoff/leases");
  const before = leasesOf(repo);
  // The same set as a format 2 build stored it: every lease of a folder in one file.
  const byFolder = new Map<string, string[]>();
  for (const n of treeNames(repo, "refs/handoff/leases:leases")) {
    const folder = n.replace(/(~\d+~\d+)?\.json$/, "");
    const lines = show(repo, `refs/handoff/leases:leases/${n}`).split("\n").filter((l) => l.startsWith("{\"pattern\""));
    byFolder.set(folder, [...(byFolder.get(folder) ?? []), ...lines.map((l) => l.replace(/,$/, ""))]);
  }
  const order = (l: string) => JSON.parse(l).pattern as string;
  const v2: Record<string, string> = {};
  for (const [folder, lines] of byFolder) v2[`${folder}.json`] = `{"leases": [\n${lines.sort((a, b) => (order(a) < order(b) ? -1 : 1)).join(",\n")}\n]}\n`;
  const old = commit(repo, { tree: tree(repo, { format: "git-handoff 2\n", leases: { tree: tree(repo, v2) } }), parent: tip, author: "alice", message: eventMessage({ type: "leased", agent: "alice", at: new Date().toISOString() }) });
  setRef(repo, "refs/handoff/leases", old);
  assert.equal(leasesOf(repo), before, "read as it was");
  assert.is(cli(["check", "src/m3/f.ts"], { cwd: repo, agent: "bob" }).code, 0);
  ok(cli(["lease", "src/extra/x.ts"], { cwd: repo, agent: "bob" }));
  assert.is(show(repo, "refs/handoff/leases:format"), "git-handoff 3");
  assert.ok(treeNames(repo, "refs/handoff/leases:leases").some((n) => /^src~\d+~\d+\.json$/.test(n)), "the big folder spread over files");
  assert.is(leasesOf(repo).length, before.length + 1);
});

test("on receive, a format 3 lease filed in another bucket, or one folder in two bucket counts, is refused", async () => {
  const bare = serveRoot().bare("project");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const a = cloneOf(bare);
  const b = cloneOf(bare);
  await storeLease({ cwd: a, agent: "alice" }, Array.from({ length: 100 }, (_, i) => `src/m${i}/f.ts`));
  await storeSync({ cwd: a, agent: "alice" });
  await storeSync({ cwd: b, agent: "bob" });
  assert.is(leasesOf(b).length, 100);
  const tip = gitOut(bare, "rev-parse", "refs/handoff/leases");
  const names = treeNames(bare, `${tip}:leases`);
  const entries: Record<string, string> = {};
  for (const n of names) entries[n] = show(bare, `${tip}:leases/${n}`) + "\n";
  const [first, second] = names as [string, string];
  const event = { type: "leased", task: "", agent: "alice", at: new Date().toISOString(), scope: "primary", worktree: null, branch: null, paths: ["src/x.ts"] };
  for (const [odd, why] of [
    // Two files' contents swapped: every lease of each is in the other's bucket.
    [{ ...entries, [first]: entries[second]!, [second]: entries[first]! }, /filed under src~/],
    // The same folder in one file besides its buckets.
    [{ ...entries, "src.json": entries[first]! }, /spread over|filed under/],
  ] as const) {
    const bad = commit(bare, { tree: tree(bare, { format: "git-handoff 3\n", leases: { tree: tree(bare, odd as Record<string, string>) } }), parent: tip, author: "alice", message: eventMessage(event) });
    setRef(bare, "refs/handoff/leases", bad);
    const s = kept(cli(["sync", "--json"], { cwd: b, agent: "bob" }));
    const q = (s.json.quarantined as { ref: string; kind: string; reason: string }[]).find((x) => x.ref === "refs/handoff/leases");
    assert.ok(q, JSON.stringify(s.json));
    assert.match(q!.reason, why, q!.reason);
    assert.is(leasesOf(b).length, 100, "nothing of the bad tree entered refs/handoff/");
  }
});

test.run();
