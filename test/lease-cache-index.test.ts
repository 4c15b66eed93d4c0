// The lease cache's index (src/store/lease-cache-file.ts): a check of a few paths, and the pre-edit
// hook's, read the lines of the folders that can cover them and the caller's own, not the whole
// file; a damaged line they need is never trusted, and a cache out of shape is read from git.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Lease } from "../src/core/lease.ts";
import { mutateLeases } from "../src/store/lease-store.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { fromTemplate } from "./support/repo-template.ts";
import { leaseCacheFile } from "../src/store/lease-cache-file.ts";

test.after(cleanupTemp);

const t0 = Date.parse("2026-06-01T10:00:00Z");
const at = (s: number) => ({ HANDOFF_NOW: new Date(t0 + s * 1000).toISOString() });

/** alice leases a/x.ts, bob b/** (exclusive) and c.md at the root; dave's check leaves the cache. */
function leased(): { repo: string; cache: string } {
  const repo = leasedRepo();
  return { repo, cache: leaseCacheFile(`${repo}/.git`) };
}

/** leased()'s repository, written by the real commands once per process; each test gets a copy. */
const leasedRepo = fromTemplate(() => {
  const repo = tempRepo();
  assert.is(cli(["lease", "a/x.ts"], { cwd: repo, agent: "alice", env: at(0) }).code, 0);
  assert.is(cli(["lease", "b/**", "--exclusive", "--ttl", "30m"], { cwd: repo, agent: "bob", env: at(0) }).code, 0);
  assert.is(cli(["lease", "c.md"], { cwd: repo, agent: "carol", env: at(0) }).code, 0);
  const cache = leaseCacheFile(`${repo}/.git`);
  rmSync(cache, { force: true });
  assert.is(cli(["check", "a/x.ts"], { cwd: repo, agent: "dave", env: at(1) }).code, 0);
  assert.match(readFileSync(cache, "utf8").split("\n")[2]!, /^#runs \[/);
  return repo;
});

/** The lease record made unreadable from git (its tree garbled): only the cache can answer. */
function garbleRecord(repo: string): () => void {
  const tree = gitOut(repo, "rev-parse", "refs/handoff/leases^{tree}");
  const loose = `${repo}/.git/objects/${tree.slice(0, 2)}/${tree.slice(2)}`;
  const kept = readFileSync(loose);
  rmSync(loose);
  writeFileSync(loose, "not a zlib stream");
  return () => {
    rmSync(loose);
    writeFileSync(loose, kept);
  };
}

test("a check reads only the folders that can cover its paths; a damaged line it needs is not trusted", () => {
  const { repo, cache } = leased();
  const restore = garbleRecord(repo);
  // bob's line damaged without changing its length (its key's tab gone): a reader that went
  // through it would fall back to git, which cannot read the record now.
  const text = readFileSync(cache, "utf8");
  writeFileSync(cache, text.replace(/\nb\t\{/, "\nb {"));
  const a = cli(["check", "a/x.ts", "--json"], { cwd: repo, agent: "dave", env: at(2) });
  assert.is(a.code, 0, a.stderr);
  assert.match(a.stdout, /"alice"/, "answered from folder a's lines alone");
  // A file at the root is covered by root-level patterns only (key `*`): carol's.
  assert.match(cli(["check", "c.md"], { cwd: repo, agent: "dave", env: at(2) }).stdout, /leased by carol/);
  const b = cli(["check", "b/y.ts", "--json"], { cwd: repo, agent: "dave", env: at(2) });
  assert.is(b.code, 2, "the damaged line is passed over for git, which says the record is unreadable");
  assert.is(b.json.error.code, "corrupt_state");
  restore();
  assert.is(cli(["check", "b/y.ts"], { cwd: repo, agent: "dave", env: at(2) }).code, 3, "read from git again: bob's exclusive lease");
});

test("the hook's filtered read holds the caller's own leases in other folders: an edit elsewhere renews them", () => {
  const { repo } = leased();
  const expiry = () => cli(["leases", "--agent", "bob", "--json"], { cwd: repo, env: at(700) }).json.find((l: { pattern: string }) => l.pattern === "b/**").expires_at;
  // bob also holds d/z.ts, from later: not yet a third through when b/** is.
  assert.is(cli(["lease", "d/z.ts", "--ttl", "30m"], { cwd: repo, agent: "bob", env: at(500) }).code, 0);
  const before = expiry();
  // 11 minutes into b/**'s 30: a third through, so bob's next edit renews it. He edits d/z.ts,
  // which he holds (nothing to lease), in folder d, whose lines do not hold b/**: only the index's
  // entry for bob brings folder b into the hook's read, and with it the renewal.
  const edit = JSON.stringify({ cwd: repo, tool_name: "Edit", tool_input: { file_path: `${repo}/d/z.ts` } });
  const r = cli(["hook", "claude-pre-tool-use"], { cwd: repo, agent: "bob", input: edit, env: { ...at(660), HANDOFF_HOOK_CATCH_WAIT: "1" } });
  assert.is(r.code, 0, r.stderr);
  assert.ok(Date.parse(expiry()) > Date.parse(before), `bob's b/** lease was renewed by his edit of d/z.ts (${before} -> ${expiry()})`);
});

test("an index past the first read, its folder names in ASCII or not: each line found and read as written", async () => {
  // 600 agents, each holding a file in a folder of its own (`d<n>`, then `dé<n>`, UTF-8 of two
  // bytes a character): the index lines run past the 16 KB the reader takes first.
  for (const folder of ["d", "dé"]) {
    const repo = tempRepo();
    const store = await openSyncedStore({ cwd: repo, agent: "setup" });
    const leases: Lease[] = Array.from({ length: 600 }, (_, a) => ({
      pattern: `${folder}${a}/x.ts`,
      agent: `agent-${a}`,
      task: null,
      exclusive: a % 2 === 0,
      acquired_at: new Date(t0).toISOString(),
      expires_at: new Date(t0 + 3_600_000).toISOString(),
      ttl_ms: 3_600_000,
      reason: "réécriture",
      worktree: null,
      branch: null,
      scope: "primary",
    }));
    leases.sort((x, y) => (x.pattern < y.pattern ? -1 : 1));
    await mutateLeases(store, () => ({ ok: true, record: { leases }, steps: [{ event: { type: "leased", task: "", agent: "setup", at: new Date(t0).toISOString(), scope: "primary", worktree: null, branch: null, paths: ["(600 leases)"] }, record: { leases } }] }));
    store.close();
    const cache = leaseCacheFile(`${repo}/.git`);
    rmSync(cache, { force: true });
    assert.is(cli(["check", `${folder}1/x.ts`], { cwd: repo, agent: "dave", env: at(1) }).code, 0, "read from git, the cache written");
    const head = readFileSync(cache, "utf8").split("\n").slice(0, 4).join("\n");
    assert.ok(Buffer.byteLength(head) > 16 * 1024 && head.includes(`"${folder}599"`), `an index of ${Buffer.byteLength(head)} bytes`);
    const restore = garbleRecord(repo);
    // Each answered from the cache alone (git cannot read the record now): the first folder's and
    // the last's, an exclusive lease and a shared one.
    for (const [n, code] of [[0, 3], [599, 0], [300, 3]] as const) {
      const r = cli(["check", `${folder}${n}/x.ts`, "--json"], { cwd: repo, agent: "dave", env: at(2) });
      assert.is(r.code, code, `${folder}${n}/x.ts: ${r.stderr}`);
      assert.match(r.stdout, new RegExp(`"agent":\\s*"agent-${n}"`), `${folder}${n}/x.ts`);
    }
    restore();
  }
});

test("a cache out of shape is read from git and written again: cut short, an index past its end, an older build's", () => {
  const { repo, cache } = leased();
  const good = readFileSync(cache, "utf8");
  const [tip, format, runs, agents] = good.split("\n");
  const body = good.slice(tip!.length + format!.length + runs!.length + agents!.length + 4);
  const list = JSON.parse(runs!.slice(6)) as (string | number)[];
  const bAt = list.indexOf("b");
  const withRuns = (r: unknown) => `${tip}\n${format}\n#runs ${JSON.stringify(r)}\n${agents}\n${body}`;
  const damaged = [
    good.slice(0, good.length - 10), // cut short
    withRuns(list.map((x, i) => (i === list.length - 1 ? (x as number) + 100 : x))), // runs that say more than there is
    withRuns(list.map((x, i) => (i === 1 ? (x as number) - 1 : x))), // runs that do not meet
    withRuns(list.map((x, i) => (i === 1 ? -(x as number) : x))), // a run of negative length
    withRuns(list.slice(0, -1)), // a key without its length
    withRuns(["a", Buffer.byteLength(body)]), // every line under one key: b's lines are not b's
    withRuns([...list.slice(0, bAt), ...list.slice(bAt + 2)]), // folder b's lines left out
    withRuns(list.slice(0, -2)), // the last run's lines left out (carol's c.md, at the root)
    `${tip}\n${format}\n#runs not json\n${agents}\n${body}`,
    `${tip}\n${format}\n${runs}\n${body}`, // the agents' line missing
    `${tip}\n${format}\n${runs}\n#agents ["bob",2,"b"]\n${body}`, // an agent's entry past the end
    // An earlier build's index (forty-sixth session and before): pairs of offsets in one line.
    `${tip}\n${format}\n#index {"b":${Buffer.byteLength(body)},"k":[["a",[[0,${Buffer.byteLength(body)}]]]],"a":[]}\n${body}`,
  ];
  for (const text of damaged) {
    writeFileSync(cache, text);
    assert.match(cli(["check", "a/x.ts"], { cwd: repo, agent: "dave", env: at(2) }).stdout, /leased by alice/);
    assert.is(cli(["check", "b/y.ts"], { cwd: repo, agent: "bob", env: at(2) }).code, 0, "bob's own lease");
    assert.is(cli(["check", "b/y.ts"], { cwd: repo, agent: "dave", env: at(2) }).code, 3);
    assert.match(cli(["check", "c.md"], { cwd: repo, agent: "dave", env: at(2) }).stdout, /leased by carol/);
    assert.match(readFileSync(cache, "utf8").split("\n")[2]!, /^#runs \[/, "written again in shape");
  }
  // A cache without an index (a build before it): read whole, as it was written.
  writeFileSync(cache, `${tip}\n${format}\n${body}`);
  const restore = garbleRecord(repo);
  assert.is(cli(["check", "b/y.ts"], { cwd: repo, agent: "dave", env: at(2) }).code, 3, "answered from the older cache alone");
  restore();
});

test("a write keeps the lines of the leases it did not change as it read them where a filtered read finds them, and every lease", () => {
  const { repo, cache } = leased();
  // alice's line written as another writer might (a space after a colon): the same lease.
  // (Not after "agent": a filtered read finds a holder's lines by `"agent":"alice",`.)
  const lines = readFileSync(cache, "utf8").split("\n");
  const line = lines.findIndex((l) => l.startsWith("a\t"));
  assert.ok(line > 0, "alice's line");
  lines[line] = lines[line]!.replace('"exclusive":false', '"exclusive": false');
  // bob's with a space after "agent": a filtered read would not find it as bob's, so it is written anew.
  const bobs = lines.findIndex((l) => l.startsWith("b\t"));
  lines[bobs] = lines[bobs]!.replace('"agent":"bob"', '"agent": "bob"');
  const runs = JSON.parse(lines[2]!.slice("#runs ".length)) as (string | number)[];
  for (const key of ["a", "b"]) runs[runs.indexOf(key) + 1] = (runs[runs.indexOf(key) + 1] as number) + 1;
  lines[2] = `#runs ${JSON.stringify(runs)}`;
  writeFileSync(cache, lines.join("\n"));
  // erin's lease: a write of the whole set, read from the cache and left in it for its new tip.
  assert.is(cli(["lease", "d/y.ts"], { cwd: repo, agent: "erin", env: at(2) }).code, 0);
  const after = readFileSync(cache, "utf8");
  assert.is(after.split("\n")[0], gitOut(repo, "rev-parse", "refs/handoff/leases"));
  assert.ok(after.includes('"agent":"alice","task":null,"exclusive": false'), "alice's line as it was read");
  assert.ok(after.includes('"agent":"bob",') && !after.includes('"agent": "bob"'), "bob's line written anew");
  // Every lease of the new set, from the cache and from git alike.
  const listed = cli(["leases", "--json"], { cwd: repo, agent: "dave", env: at(3) });
  assert.is(listed.code, 0, listed.stderr);
  assert.equal((JSON.parse(listed.stdout) as { pattern: string }[]).map((l) => l.pattern).sort(), ["a/x.ts", "b/**", "c.md", "d/y.ts"]);
  rmSync(cache);
  const fromGit = cli(["leases", "--json"], { cwd: repo, agent: "dave", env: at(3) });
  assert.is(fromGit.stdout, listed.stdout);
});

test.run();
