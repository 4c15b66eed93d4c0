// A sync remote on this machine's disk is pushed to and listed in process (git/path-remote.ts):
// what lands there must be what `git push` would leave (objects whole, refs compare-and-swapped,
// every ref or none), and anything receive-pack would act on (hooks, fsck, hidden refs, rewritten
// URLs, garbage collection) must still go through git.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanEnv, cleanupTemp, cli, cliAsync, gitOut, seedTasks, tempDir } from "./support/repo.ts";
import { storeClaim, storeSync } from "./support/seed.ts";
import { spawnSync } from "node:child_process";
import { twoClones } from "./support/servers.ts";
import { mountTypeOf, pushToPath, wouldCollectGarbage, type PathRemoteSource } from "../src/git/path-remote.ts";
import { ObjectReader } from "../src/git/object-reader.ts";
import { ObjectWriter } from "../src/git/object-writer.ts";
import { scanConfig } from "../src/git/config-scan.ts";
import { lsRemoteHandoff } from "../src/git/remote-listing.ts";
import { lsRemoteFamilies, lsRemoteRefs } from "../src/git/remote-ref.ts";

test.after(cleanupTemp);

/** The git commands a CLI run started, from GIT_TRACE (none for in-process pushes and listings). */
function traced(cwd: string, args: string[], agent = "alice", env: NodeJS.ProcessEnv = {}) {
  const file = `${tempDir("handoff-trace-")}/trace`;
  const r = cli(args, { cwd, agent, env: { GIT_TRACE: file, ...env } });
  let trace = "";
  try {
    trace = readFileSync(file, "utf8");
  } catch {
    /* no git process at all */
  }
  const commands = [...trace.matchAll(/trace: (?:built-in|exec|run_command): (.*)/g)].map((m) => m[1]!);
  return { ...r, commands, pushed: commands.some((c) => /\bgit push\b|receive-pack/.test(c)), listed: commands.some((c) => /\bls-remote\b/.test(c)) };
}

/** git with `input` on stdin; its output, trimmed. */
function sh(cwd: string, args: string[], input: string): string {
  const r = spawnSync("git", args, { cwd, input, env: cleanEnv(), encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
}

function fsckRemote(bare: string): void {
  gitOut(bare, "fsck", "--strict", "--no-dangling", "--connectivity-only");
  gitOut(bare, "fsck", "--strict", "--no-dangling");
}

test("a claim through a remote on this disk lands without git push, whole, and the other clone sees it", async () => {
  const { bare, a, b } = twoClones();
  await seedTasks(a, [{ id: "t1", scope: ["src/a/**"] }, { id: "t2", scope: ["src/b/**"] }]);
  await storeSync({ cwd: a, agent: "lead" });
  const claim = traced(a, ["claim", "t1"]);
  assert.is(claim.code, 0, claim.stderr);
  assert.not.ok(claim.pushed, `no git push: ${claim.commands.join(" | ")}`);
  assert.is(gitOut(bare, "rev-parse", "refs/handoff/tasks/t1"), gitOut(a, "rev-parse", "refs/handoff/tasks/t1"));
  assert.is(gitOut(bare, "rev-parse", "refs/handoff/leases"), gitOut(a, "rev-parse", "refs/handoff/leases"));
  assert.is(JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/t1:task.json")).status, "claimed");
  fsckRemote(bare);
  const doctor = cli(["doctor"], { cwd: a, agent: "lead" });
  assert.match(doctor.stdout, /origin is a repository on this disk \(.*r\.git\): pushes and listings are done in process/);
  // A sync with nothing new reads the remote's refs in process too.
  const quiet = traced(a, ["sync"]);
  assert.is(quiet.code, 0, quiet.stderr);
  assert.not.ok(quiet.listed || quiet.pushed, quiet.commands.join(" | "));
  // The other clone learns of the claim and is refused.
  const other = cli(["claim", "t1", "--json"], { cwd: b, agent: "bob" });
  assert.is(other.code, 3, other.stdout + other.stderr);
  assert.is(other.json?.error?.code, "held_by_other", other.stdout);
  // A done, a release and the other clone's own claim: the remote stays whole through all of them.
  assert.is(cli(["done", "t1"], { cwd: a, agent: "alice" }).code, 0);
  assert.is(cli(["claim", "t2"], { cwd: b, agent: "bob" }).code, 0);
  assert.is(cli(["release", "t2"], { cwd: b, agent: "bob" }).code, 0);
  // Writes that grant nothing exclusive are pushed by the next sync.
  for (const cwd of [a, b]) {
    const s = traced(cwd, ["sync"]);
    assert.is(s.code, 0, s.stderr);
    assert.not.ok(s.pushed || s.listed, s.commands.join(" | "));
  }
  fsckRemote(bare);
  assert.is(JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/t1:task.json")).status, "done");
  assert.is(JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/t2:task.json")).status, "todo");
});

test("clones racing for the same tasks, in process against in process and against git push: one grant per task, every loser told", async () => {
  const { bare, a, b } = twoClones();
  const ids = ["r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"];
  await seedTasks(a, ids.map((id) => ({ id, scope: [`src/${id}/**`] })));
  await storeSync({ cwd: a, agent: "lead" });
  for (const [n, id] of ids.entries()) {
    // Every other task, the second clone pushes with git (receive-pack's locks against ours).
    const env = n % 2 ? { HANDOFF_PATH_REMOTE: "git" } : {};
    const [x, y] = await Promise.all([cliAsync(["claim", id, "--json"], { cwd: a, agent: `alice-${id}` }), cliAsync(["claim", id, "--json"], { cwd: b, agent: `bob-${id}`, env })]);
    const winners = [x, y].filter((r) => r.code === 0);
    assert.is(winners.length, 1, `${id}: ${x.stdout}${x.stderr} / ${y.stdout}${y.stderr}`);
    const loser = x.code === 0 ? y : x;
    assert.is(loser.json?.error?.code, "held_by_other", loser.stdout + loser.stderr);
    const holder = JSON.parse(gitOut(bare, "show", `refs/handoff/tasks/${id}:task.json`)).claim.agent;
    assert.is(holder, x.code === 0 ? `alice-${id}` : `bob-${id}`, id);
  }
  fsckRemote(bare);
});

test("writes made while the remote was away land in one later push, as a chain, and the remote is whole", async () => {
  const { bare, a, b } = twoClones();
  await seedTasks(a, [{ id: "c1", scope: ["src/c1/**"] }, { id: "c2" }]);
  await storeSync({ cwd: a, agent: "lead" });
  renameSync(bare, `${bare}.away`);
  const offline = cli(["--offline", "claim", "c1"], { cwd: a, agent: "alice" });
  assert.is(offline.code, 0, offline.stderr);
  assert.match(offline.stderr + offline.stdout, /tentative|offline/);
  const renew = cli(["--offline", "renew", "c1"], { cwd: a, agent: "alice" });
  assert.is(renew.code, 0, renew.stderr);
  renameSync(`${bare}.away`, bare);
  const sync = traced(a, ["sync"]);
  assert.is(sync.code, 0, sync.stderr);
  assert.not.ok(sync.pushed, sync.commands.join(" | "));
  fsckRemote(bare);
  assert.is(gitOut(bare, "rev-parse", "refs/handoff/tasks/c1"), gitOut(a, "rev-parse", "refs/handoff/tasks/c1"));
  const seen = cli(["task", "show", "c1", "--json"], { cwd: b, agent: "bob" });
  assert.is(cli(["sync"], { cwd: b, agent: "bob" }).code, 0);
  const shown = cli(["task", "show", "c1", "--json"], { cwd: b, agent: "bob" });
  assert.is(shown.json?.task?.claim?.agent ?? shown.json?.claim?.agent, "alice", seen.stdout + shown.stdout);
});

test("a receive hook, fsck, hidden refs or a rewritten URL send the push or the listing to git, which honours them", async () => {
  // A pre-receive hook that refuses refs/handoff/*: refused as the remote says, nothing moved.
  {
    const { bare, a } = twoClones();
    await seedTasks(a, [{ id: "h1" }]);
    await storeSync({ cwd: a, agent: "lead" });
    const before = gitOut(bare, "rev-parse", "refs/handoff/tasks/h1");
    writeFileSync(`${bare}/hooks/pre-receive`, "#!/bin/sh\necho 'no coordination here' >&2\nexit 1\n");
    chmodSync(`${bare}/hooks/pre-receive`, 0o755);
    const r = traced(a, ["claim", "h1", "--json"]);
    assert.ok(r.pushed, "git push ran");
    const doctor = cli(["doctor", "--json"], { cwd: a, agent: "lead" });
    const line = (doctor.json?.checks ?? doctor.json)?.find?.((c: { name: string }) => c.name === "remote-on-disk");
    assert.match(line?.detail ?? doctor.stdout, /go through git because .*has a pre-receive hook/);
    assert.is.not(r.code, 0);
    assert.is(r.json?.error?.code, "remote_rejected", r.stdout + r.stderr);
    assert.match(r.json.error.message, /no coordination here/);
    assert.is(gitOut(bare, "rev-parse", "refs/handoff/tasks/h1"), before);
  }
  // receive.fsckObjects, or a URL rewritten by url.<base>.insteadOf: git push, which lands.
  for (const rewritten of [false, true]) {
    const { bare, a } = twoClones();
    await seedTasks(a, [{ id: "g1" }]);
    await storeSync({ cwd: a, agent: "lead" });
    // The URL names another repository on this disk, which git rewrites to the real remote.
    const decoy = `${tempDir("handoff-decoy-")}/decoy.git`;
    if (rewritten) {
      gitOut(a, "init", "-q", "--bare", decoy);
      gitOut(a, "config", `url.${bare}.insteadOf`, decoy);
      gitOut(a, "config", "remote.origin.url", decoy);
    } else gitOut(bare, "config", "receive.fsckObjects", "true");
    const r = traced(a, ["claim", "g1"]);
    assert.is(r.code, 0, r.stderr);
    assert.ok(r.pushed, `git push ran: ${r.commands.join(" | ")}`);
    assert.is(gitOut(bare, "rev-parse", "refs/handoff/tasks/g1"), gitOut(a, "rev-parse", "refs/handoff/tasks/g1"));
    if (rewritten) {
      assert.is(cli(["sync"], { cwd: a, agent: "lead" }).code, 0);
      assert.is(gitOut(decoy, "for-each-ref", "refs/handoff/"), "", "nothing read from or written to the repository the URL names before git rewrites it");
      assert.match(gitOut(decoy, "count-objects"), /^0 objects/, "not even an object");
    }
  }
  // Refs the remote hides from listings stay hidden: the listing is git's.
  {
    const { bare, a } = twoClones();
    await seedTasks(a, [{ id: "v1" }]);
    await storeSync({ cwd: a, agent: "lead" });
    gitOut(bare, "config", "transfer.hideRefs", "refs/handoff/tasks/v1");
    const r = traced(a, ["sync"]);
    assert.ok(r.listed, `git ls-remote ran: ${r.commands.join(" | ")}`);
    // A ref file whose name git would judge (a space in it): the listing is git's too.
    gitOut(bare, "config", "--unset", "transfer.hideRefs");
    writeFileSync(`${bare}/refs/handoff/tasks/odd name`, gitOut(bare, "rev-parse", "refs/handoff/tasks/v1") + "\n");
    const odd = traced(a, ["sync"]);
    assert.ok(odd.listed, `git ls-remote ran: ${odd.commands.join(" | ")}`);
  }
});

test("a lock at the remote: a fresh one is waited out as a lost race, one left by a killed process is said with what to do", async () => {
  const { bare, a } = twoClones();
  await seedTasks(a, [{ id: "k1" }, { id: "k2" }]);
  await storeSync({ cwd: a, agent: "lead" });
  // Another writer holds k1's lock for a moment: the claim retries and lands once it is gone.
  const lock = `${bare}/refs/handoff/tasks/k1.lock`;
  writeFileSync(lock, "");
  const claim = cliAsync(["claim", "k1", "--json"], { cwd: a, agent: "alice" });
  setTimeout(() => rmSync(lock, { force: true }), 700);
  const r = await claim;
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.is(JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/k1:task.json")).claim.agent, "alice");
  // A lock a minute old was left by a process that died holding it: no retrying against it.
  const before = gitOut(bare, "for-each-ref", "refs/handoff/");
  const stale = `${bare}/refs/handoff/tasks/k2.lock`;
  writeFileSync(stale, "");
  utimesSync(stale, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
  const t0 = Date.now();
  const stuck = cli(["claim", "k2", "--json"], { cwd: a, agent: "bob" });
  assert.is.not(stuck.code, 0);
  assert.is(stuck.json?.error?.code, "remote_rejected", stuck.stdout + stuck.stderr);
  assert.match(stuck.json.error.message, /k2\.lock is 6\d s old, left by a killed process .*remove it/);
  assert.ok(Date.now() - t0 < 20_000, "said at once, not after the operation's whole budget");
  assert.is(gitOut(bare, "for-each-ref", "refs/handoff/"), before, "nothing moved at the remote");
});

test("SHA-256 repositories are pushed to in process; a remote of another object format is git's to refuse", async () => {
  const root = tempDir("handoff-sha256-");
  const bare = `${root}/r.git`;
  gitOut(root, "init", "-q", "--bare", "--object-format=sha256", bare);
  const a = `${root}/a`;
  gitOut(root, "init", "-q", "-b", "main", "--object-format=sha256", a);
  gitOut(a, "commit", "-q", "--allow-empty", "-m", "init");
  gitOut(a, "remote", "add", "origin", bare);
  gitOut(a, "push", "-q", "origin", "main");
  await seedTasks(a, [{ id: "s1", scope: ["src/**"] }]);
  await storeSync({ cwd: a, agent: "lead" });
  const r = traced(a, ["claim", "s1"]);
  assert.is(r.code, 0, r.stderr);
  assert.not.ok(r.pushed, r.commands.join(" | "));
  assert.is(gitOut(bare, "rev-parse", "refs/handoff/tasks/s1").length, 64);
  fsckRemote(bare);
});

test("what a push sends: this process's new objects as they are, the parent's trees read only for entries it did not write", async () => {
  const { bare, a } = twoClones();
  // The parent: a root tree with a file and a folder of many files, on the remote, packed here.
  const blob = (text: string) => sh(a, ["hash-object", "-w", "--stdin"], text);
  const mktree = (lines: string[]) => sh(a, ["mktree"], lines.join("\n") + "\n");
  const folder = mktree(Array.from({ length: 40 }, (_, i) => `100644 blob ${blob(`file ${i}\n`)}\tf${i}`));
  const root0 = mktree([`100644 blob ${blob("one\n")}\ttask.json`, `040000 tree ${folder}\tarea`]);
  const parent = gitOut(a, "commit-tree", root0, "-m", "parent");
  gitOut(a, "update-ref", "refs/handoff/tasks/w", parent);
  gitOut(a, "push", "-q", "origin", "refs/handoff/tasks/w");
  gitOut(a, "repack", "-adq");
  // The child, written by "this process": a new task.json and a new root; the folder unchanged.
  let writer = new ObjectWriter(`${a}/.git`, "sha1");
  const reader = new ObjectReader(`${a}/.git`, a);
  reader.recent = (oid) => writer.recentObject(oid);
  const json = writer.write("blob", "two\n");
  // Entries in git's order (here plain name order: "area" < "task.json").
  const treeOf = (entries: [string, string, string][]) => Buffer.concat(entries.flatMap(([mode, name, oid]) => [Buffer.from(`${mode} ${name}\0`), Buffer.from(oid, "hex")]));
  const rootOid = writer.write("tree", treeOf([["40000", "area", folder], ["100644", "task.json", json]]));
  const child = writer.write("commit", `tree ${rootOid}\nparent ${parent}\nauthor t <t@t> 1 +0000\ncommitter t <t@t> 1 +0000\n\nchild\n`);
  const reads: string[] = [];
  const source: PathRemoteSource = {
    format: "sha1",
    read: (oid) => (reads.push(oid), reader.read(oid)),
    recent: (oid) => writer.recentObject(oid) !== undefined,
    config: (want) => scanConfig(process.env, `${a}/.git`, `${a}/.git`, want),
  };
  try {
    const r = await pushToPath(source, "origin", [{ ref: "refs/handoff/tasks/w", new: child, expected: parent }]);
    assert.equal(r, { ok: true });
    assert.is(gitOut(bare, "rev-parse", "refs/handoff/tasks/w"), child);
    fsckRemote(bare);
    // The root lists the unchanged folder, which this process did not write: the parent's root
    // was read to see it unchanged, the folder itself neither read nor sent.
    assert.ok(reads.includes(parent) && reads.includes(root0), reads.join(" "));
    assert.not.ok(reads.includes(folder), "the unchanged folder is not read");
    // A child whose every entry this process wrote (another process wrote its parent): the
    // parent is not read at all.
    writer = new ObjectWriter(`${a}/.git`, "sha1");
    const flat = writer.write("tree", treeOf([["100644", "task.json", writer.write("blob", "three\n")]]));
    const next = writer.write("commit", `tree ${flat}\nparent ${child}\nauthor t <t@t> 1 +0000\ncommitter t <t@t> 1 +0000\n\nnext\n`);
    reads.length = 0;
    assert.equal(await pushToPath(source, "origin", [{ ref: "refs/handoff/tasks/w", new: next, expected: child }]), { ok: true });
    assert.ok(reads.every((oid) => writer.recentObject(oid) !== undefined), `only objects in memory read: ${reads.join(" ")}`);
    // A stale expectation: refused, nothing moved.
    const r3 = await pushToPath(source, "origin", [{ ref: "refs/handoff/tasks/w", new: child, expected: parent }]);
    assert.is(r3?.ok, false);
    assert.is(gitOut(bare, "rev-parse", "refs/handoff/tasks/w"), next);
    fsckRemote(bare);
  } finally {
    reader.close();
  }
});

test("listings read in process say what git ls-remote says, loose and packed refs alike", async () => {
  const { bare, a } = twoClones();
  await seedTasks(a, [{ id: "l1", scope: ["src/l1/**"] }, { id: "l2" }, { id: "l3" }]);
  await storeSync({ cwd: a, agent: "lead" });
  await storeClaim({ cwd: a, agent: "alice" }, "l1");
  const reader = new ObjectReader(`${a}/.git`, a);
  const source: PathRemoteSource = { format: "sha1", read: (oid) => reader.read(oid), recent: () => false, config: (want) => scanConfig(process.env, `${a}/.git`, `${a}/.git`, want) };
  try {
    for (const packed of [false, true]) {
      if (packed) gitOut(bare, "pack-refs", "--all");
      const viaGit = await lsRemoteHandoff(a, "origin", 10_000);
      const inProcess = await lsRemoteHandoff(a, "origin", 10_000, undefined, source);
      if (!viaGit.ok || !inProcess.ok) throw new Error("listing failed");
      assert.is(inProcess.raw, viaGit.raw, "byte for byte");
      assert.ok(inProcess.tips.size >= 4, [...inProcess.tips.keys()].join(" "));
      const names = ["refs/handoff/tasks/l1", "refs/handoff/tasks/nope", "refs/handoff/leases"];
      const exact = [await lsRemoteRefs(a, "origin", names, 10_000), await lsRemoteRefs(a, "origin", names, 10_000, source)];
      const families = ["refs/handoff/tasks/", "refs/handoff/leases"];
      const fam = [await lsRemoteFamilies(a, "origin", families, 10_000), await lsRemoteFamilies(a, "origin", families, 10_000, source)];
      for (const [g, p] of [exact, fam]) {
        if (!g!.ok || !p!.ok) throw new Error("listing failed");
        assert.equal([...p!.tips].sort(), [...g!.tips].sort());
      }
      assert.is((exact[1] as { tips: Map<string, string> }).tips.size, 2);
    }
  } finally {
    reader.close();
  }
});

test("a listing that read many loose refs at the remote packs them there, as receive-pack's gc would; listings stay git's", async () => {
  const { bare, a } = twoClones();
  await seedTasks(a, [{ id: "p0" }]);
  await storeSync({ cwd: a, agent: "lead" });
  const oid = gitOut(bare, "rev-parse", "refs/handoff/tasks/p0");
  sh(bare, ["update-ref", "--stdin"], Array.from({ length: 300 }, (_, i) => `create refs/handoff/tasks/many-${i} ${oid}`).join("\n") + "\n");
  // pack-refs removes the folders it empties.
  const loose = () => (existsSync(`${bare}/refs/handoff/tasks`) ? readdirSync(`${bare}/refs/handoff/tasks`).length : 0);
  assert.ok(loose() > 300);
  // The planted refs hold p0's record under other names: kept back on receive, so sync exits 3.
  const viaGit = cli(["sync", "--json"], { cwd: a, agent: "lead", env: { HANDOFF_PATH_REMOTE: "git" } });
  assert.is(viaGit.code, 3, viaGit.stderr);
  assert.ok(viaGit.json.quarantined.some((q: { ref: string }) => q.ref === "refs/handoff/tasks/many-0"), JSON.stringify(viaGit.json.quarantined?.[0]));
  assert.ok(loose() > 300, "git's listing packs nothing");
  const r = cli(["sync"], { cwd: a, agent: "lead" });
  assert.is(r.code, 3, r.stderr);
  for (const end = Date.now() + 20_000; loose() > 0 && Date.now() < end; ) await new Promise((res) => setTimeout(res, 50));
  assert.is(loose(), 0, "packed in the background");
  assert.is(gitOut(bare, "rev-parse", "refs/handoff/tasks/many-299"), oid);
  fsckRemote(bare);
});

test("mount points: the longest one a path is under decides, escaped names and mounts over mounts included", () => {
  const info = [
    "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw",
    "30 27 0:27 / /srv rw,relatime - nfs4 server:/export rw",
    "31 30 0:28 / /srv/local rw - tmpfs tmpfs rw",
    "32 27 0:29 / /mnt/with\\040space rw - cifs //host/share rw",
    "33 27 0:30 / /data rw - fuse.sshfs host: rw",
    "34 33 0:31 / /data rw - xfs /dev/vdb rw",
  ].join("\n");
  assert.is(mountTypeOf(info, "/home/me/r.git"), "ext4");
  assert.is(mountTypeOf(info, "/srv/r.git"), "nfs4");
  assert.is(mountTypeOf(info, "/srvx/r.git"), "ext4", "a name that only starts like a mount point is not under it");
  assert.is(mountTypeOf(info, "/srv/local/r.git"), "tmpfs");
  assert.is(mountTypeOf(info, "/mnt/with space/r.git"), "cifs");
  assert.is(mountTypeOf(info, "/data/r.git"), "xfs", "the later mount over the same point wins");
});

test("garbage collection receive-pack would start after the push: the push is git's", () => {
  const dir = tempDir("handoff-gc-");
  mkdirSync(`${dir}/objects/17`, { recursive: true });
  mkdirSync(`${dir}/objects/pack`, { recursive: true });
  const fill = (n: number) => {
    for (let i = 0; i < n; i++) writeFileSync(`${dir}/objects/17/${i.toString(16).padStart(38, "0")}`, "");
  };
  fill(27);
  assert.not.ok(wouldCollectGarbage(dir, []), "27 in folder 17: under gc.auto's 6,700");
  fill(28);
  assert.ok(wouldCollectGarbage(dir, []), "28: over it");
  assert.not.ok(wouldCollectGarbage(dir, [{ section: "gc", subsection: null, key: "auto", value: "0" }]), "gc.auto=0: never");
  assert.ok(wouldCollectGarbage(dir, [{ section: "gc", subsection: null, key: "auto", value: "2560" }]), "a lower gc.auto");
  const packs = tempDir("handoff-gc-");
  mkdirSync(`${packs}/objects/pack`, { recursive: true });
  for (let i = 0; i < 51; i++) writeFileSync(`${packs}/objects/pack/pack-${i}.idx`, "");
  assert.ok(wouldCollectGarbage(packs, []), "more packs than gc.autoPackLimit");
  assert.not.ok(wouldCollectGarbage(packs, [{ section: "gc", subsection: null, key: "autopacklimit", value: "60" }]));
});

test.run();
