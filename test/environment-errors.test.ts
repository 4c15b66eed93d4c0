// The machine's refusals are not bugs: a full disk and a read-only file system end in
// `environment` (exit 5) naming the cause and the path, with no temp object left behind; a
// config the YAML parser refuses (an alias bomb) is invalid input (exit 2).
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, cleanEnv, cleanupTemp, cli, gitOut, handoffRefs, tempDir, tempRepo } from "./support/repo.ts";

const mounts: string[] = [];
test.after(() => {
  for (const m of mounts) spawnSync("umount", ["-l", m]);
  cleanupTemp();
});

/** A 2 MB tmpfs (needs root). Never skipped: without it the test fails and says why. */
function smallDisk(): string {
  const dir = tempDir("handoff-tmpfs-");
  const r = spawnSync("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", dir], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`this test mounts a 2 MB tmpfs and needs root: mount failed (${r.status}): ${r.stderr || r.error}`);
  mounts.push(dir);
  return dir;
}

function tempObjects(repo: string): string[] {
  const out: string[] = [];
  const objects = `${repo}/.git/objects`;
  for (const d of readdirSync(objects)) {
    if (d.length !== 2) continue;
    for (const f of readdirSync(`${objects}/${d}`)) if (f.startsWith("tmp_obj_")) out.push(`${d}/${f}`);
  }
  return out;
}

function repoOn(disk: string): string {
  const repo = `${disk}/repo`;
  mkdirSync(repo);
  gitOut(repo, "init", "-q", "-b", "main");
  gitOut(repo, "commit", "-q", "--allow-empty", "-m", "initial");
  assert.is(cli(["task", "add", "before the disk filled", "--id", "early"], { cwd: repo, agent: "lead" }).code, 0);
  return repo;
}

test("a full disk: environment, exit 5, cause and path named, no tmp_obj_* left, no ref moved", () => {
  const disk = smallDisk();
  const repo = repoOn(disk);
  // Fill what is left of the 2 MB.
  spawnSync("dd", ["if=/dev/zero", `of=${disk}/fill`, "bs=4k"], { encoding: "utf8" });
  const before = handoffRefs(repo);
  let last;
  for (let i = 0; i < 20; i++) {
    last = cli(["task", "add", `task ${i} `.repeat(200), "--id", `t${i}`, "--json"], { cwd: repo, agent: "lead" });
    if (last.code !== 0) break;
  }
  assert.is(last!.code, 5, last!.stdout + last!.stderr);
  assert.is(last!.json.error.code, "environment");
  assert.is(last!.json.error.data.cause, "ENOSPC");
  assert.match(last!.stderr, /no space left on the device \(.*\/repo\/\.git/);
  assert.not.match(last!.stderr, /unexpected error/);
  assert.equal(tempObjects(repo), []);
  assert.ok(handoffRefs(repo).startsWith(before), "earlier state intact");
});

test("a read-only file system: environment, exit 5, EROFS", () => {
  const disk = smallDisk();
  const repo = repoOn(disk);
  const before = handoffRefs(repo);
  const r = spawnSync("mount", ["-o", "remount,ro", disk], { encoding: "utf8" });
  assert.is(r.status, 0, r.stderr);
  const add = cli(["task", "add", "cannot be written", "--id", "ro", "--json"], { cwd: repo, agent: "lead" });
  assert.is(add.code, 5, add.stdout + add.stderr);
  assert.is(add.json.error.code, "environment");
  assert.is(add.json.error.data.cause, "EROFS");
  assert.match(add.stderr, /read-only/);
  assert.is(handoffRefs(repo), before);
  // Reads still work.
  assert.is(cli(["task", "list"], { cwd: repo }).code, 0);
});

test("too many open files: environment (EMFILE), never an unexpected error, at whatever limit the process runs out", () => {
  const repo = tempRepo();
  // A config with an include sends the integration branch's lookup to git (policy-source.ts reads
  // plain config itself): the command then starts git processes, whose pipes run out first. In a
  // plain repository it starts none, and needs no descriptor Node's own start does not.
  writeFileSync(join(repo, ".git", "extra.gitconfig"), "");
  gitOut(repo, "config", "include.path", join(repo, ".git", "extra.gitconfig"));
  const codes = new Set<number>();
  // Node itself needs some descriptors to start: step the limit up until writes succeed.
  for (let n = 14; n <= 40; n += 2) {
    const r = spawnSync("sh", ["-c", `ulimit -n ${n}; exec "${process.execPath}" "${CLI}" task add "limit ${n}" --id l${n} --json`], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: "lead" }), encoding: "utf8" });
    assert.not.match(r.stdout + r.stderr, /unexpected error/, `limit ${n}: ${r.stderr}`);
    codes.add(r.status ?? -1);
    if (r.status === 5) assert.match(r.stdout, /"cause": "EMFILE"/);
    if (r.status === 0) break;
  }
  assert.ok(codes.has(5), `some limit ends in exit 5: saw ${[...codes].join(", ")}`);
  assert.ok(codes.has(0), "a higher limit works");
  assert.equal(tempObjects(repo), []);
});

test("a .git/config git cannot read: environment (GITCONFIG), exit 5, the file named, no ref moved; fixed, the same command works", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "before", "--id", "t1"], { cwd: repo, agent: "lead" }).code, 0);
  const before = handoffRefs(repo);
  const config = `${repo}/.git/config`;
  const good = readFileSync(config, "utf8");
  writeFileSync(config, `${good}[core\n\tbad`);
  for (const args of [["task", "add", "after", "--id", "t2", "--json"], ["claim", "t1", "--json"]]) {
    const r = cli(args, { cwd: repo, agent: "alice" });
    assert.is(r.code, 5, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
    assert.is(r.json.error.code, "environment");
    assert.is(r.json.error.data.cause, "GITCONFIG");
    assert.match(r.json.error.message, /bad config line \d+ in file \.git\/config/);
    assert.match(r.json.error.suggestions[0].detail, /fix the line git names/);
    assert.not.match(r.stdout + r.stderr, /unexpected error/);
  }
  writeFileSync(config, good);
  assert.equal(handoffRefs(repo), before, "no ref moved");
  assert.is(cli(["claim", "t1"], { cwd: repo, agent: "alice" }).code, 0);
});

test("a repository another user owns: not_a_repo with git's reason and the safe.directory fix, nothing written", () => {
  const repo = tempRepo();
  const r0 = spawnSync("chown", ["-R", "nobody", repo]);
  assert.is(r0.status, 0, `this test needs root to give the repository to another user: ${r0.stderr}`);
  const r = cli(["task", "add", "x", "--id", "t1", "--json"], { cwd: repo, agent: "lead" });
  assert.is(r.code, 2, r.stdout + r.stderr);
  assert.is(r.json.error.code, "not_a_repo");
  assert.match(r.json.error.message, /dubious ownership/);
  assert.is(r.json.error.suggestions[0].detail, `if you trust it: git config --global --add safe.directory ${repo}`);
  spawnSync("chown", ["-R", `${process.getuid!()}`, repo]);
  assert.is(handoffRefs(repo), "", "nothing written");
});

test("a YAML alias bomb in .handoff.yaml: invalid_input, exit 2, at once", () => {
  const repo = tempRepo();
  const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
  for (let i = 1; i < 9; i++) bomb.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(",")}]`);
  writeFileSync(`${repo}/.handoff.yaml`, bomb.join("\n") + "\n");
  const start = Date.now();
  const r = cli(["task", "list", "--json"], { cwd: repo });
  assert.is(r.code, 2, r.stderr);
  assert.is(r.json.error.code, "invalid_input");
  assert.match(r.stderr, /\.handoff\.yaml/);
  assert.ok(Date.now() - start < 10_000);
});

test.run();
