// doctor checks for real: leases that outlived their work, dependencies on missing tasks and
// cycles, unknown format versions, git hooks installed and executable, git-handoff on the hooks'
// PATH, husky/lefthook lines, agent hook configs. Each fails (or warns) with its fix, then passes.
import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { openStore } from "../src/store/store.ts";
import { addTask } from "../src/store/task-store.ts";
import { cleanupTemp, cli, gitOut, sh, tempDir, tempRepo } from "./support/repo.ts";
import { storeClaim, storeDone, storeLease, storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

type CheckJson = { name: string; status: string; detail: string; fix?: string };
function doctor(repo: string, env: NodeJS.ProcessEnv = {}) {
  const r = cli(["doctor", "--json"], { cwd: repo, agent: "lead", env });
  const by: Record<string, any> = Object.fromEntries((r.json.checks as CheckJson[]).map((c) => [c.name, c]));
  return { code: r.code, by, ok: r.json.ok as boolean };
}

/**
 * `done` of `id` by `agent` with the lease ref put back where it was (repo.ts keepingLeases, written
 * in-process): a lease left serving a finished task.
 */
async function doneKeepingLeases(repo: string, agent: string, id: string): Promise<void> {
  const tip = gitOut(repo, "rev-parse", "refs/handoff/leases");
  await storeDone({ cwd: repo, agent }, id);
  sh("git", ["update-ref", "refs/handoff/leases", tip], repo);
}

test("leases of a finished task: doctor fails naming the lease, and its fix makes it pass", async () => {
  const repo = tempRepo();
  assert.is(doctor(repo).by.leases.status, "ok");
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "x", objective: "x" }]);
  await storeClaim({ cwd: repo, agent: "alice" }, "x");
  await storeLease({ cwd: repo, agent: "alice" }, ["src/a.ts"], { task: "x" });
  await doneKeepingLeases(repo, "alice", "x");
  const bad = doctor(repo);
  assert.is(bad.code, 2);
  assert.is(bad.by.leases.status, "fail");
  assert.match(bad.by.leases.detail, /alice's lease on src\/a\.ts serves task x, which is done/);
  assert.is(bad.by.leases.fix, "git handoff unlease src/a.ts --agent alice");
  assert.is(cli(["unlease", "src/a.ts", "--agent", "alice"], { cwd: repo }).code, 0);
  assert.is(doctor(repo).by.leases.status, "ok");
});

test("doctor --repair removes task leases their holder's task no longer justifies, logged, and leaves the rest", async () => {
  const repo = tempRepo();
  const as = (agent: string) => ({ cwd: repo, agent });
  await storeTasks(as("lead"), [
    { id: "x", objective: "x" },
    { id: "y", objective: "y" },
    { id: "z", objective: "z", scope: ["src/z/**"], exclusive: true },
  ]);
  await storeClaim(as("alice"), "x");
  await storeLease(as("alice"), ["src/a.ts"], { task: "x" });
  await doneKeepingLeases(repo, "alice", "x");
  // What a claim killed after its lease but before its task was written leaves (test/crash-between-renames,
  // before the renames were ordered): bob's lease for y, y nobody's. `lease --task` writes none itself.
  const unclaimed = gitOut(repo, "rev-parse", "refs/handoff/tasks/y");
  await storeClaim(as("bob"), "y");
  await storeLease(as("bob"), ["lib/**"], { task: "y", exclusive: true });
  sh("git", ["update-ref", "refs/handoff/tasks/y", unclaimed], repo);
  await storeClaim(as("carol"), "z");
  await storeLease(as("dave"), ["docs/"]);
  assert.is(cli(["check", "lib/b.ts"], { cwd: repo, agent: "erin" }).code, 3);
  assert.is(doctor(repo).by.leases.status, "fail");
  const r = cli(["doctor", "--repair", "--json"], { cwd: repo, agent: "lead" });
  const leases = (r.json.checks as CheckJson[]).find((c) => c.name === "leases")!;
  assert.is(leases.status, "ok");
  assert.match(leases.detail, /removed 2 task lease\(s\) that outlived their work: .*alice's lease on src\/a\.ts \(task x\)/);
  assert.match(leases.detail, /bob's lease on lib\/\*\* \(task y\)/);
  const left = (cli(["leases", "--json"], { cwd: repo, agent: "lead" }).json as { agent: string; pattern: string }[]).map((l) => `${l.agent} ${l.pattern}`).sort();
  assert.equal(left, ["carol src/z/**", "dave docs/**"]);
  assert.match(gitOut(repo, "log", "--format=%s", "refs/handoff/leases"), /^unleased .*by lead/);
  assert.is(cli(["check", "lib/b.ts"], { cwd: repo, agent: "erin" }).code, 0);
  assert.is(doctor(repo).by.leases.status, "ok");
});

test("dependencies on a missing task and cycles fail; format versions this tool does not know warn, and readers say so once", async () => {
  const repo = tempRepo();
  assert.match(doctor(repo).by.dependencies.detail, /0 dependency edge/);
  // Records as another clone could send them (the CLI refuses to make them).
  const store = await openStore({ cwd: repo, agent: "lead" });
  const input = { objective: "o", priority: 0, scope: [], maxAttempts: 3 };
  await addTask(store, { ...input, id: "orphan", after: ["ghost"] });
  await addTask(store, { ...input, id: "a", after: ["b"] });
  await addTask(store, { ...input, id: "b", after: ["a"] });
  store.close();
  const bad = doctor(repo);
  assert.is(bad.code, 2);
  assert.is(bad.by.dependencies.status, "fail");
  assert.match(bad.by.dependencies.detail, /1 on a missing task: orphan waits on ghost/);
  assert.match(bad.by.dependencies.detail, /1 cycle\(s\): a -> b -> a/);
  assert.is(bad.by.dependencies.fix, "git handoff undepend orphan --on ghost");
  for (const [id, on] of [["orphan", "ghost"], ["a", "b"]] as const) assert.is(cli(["undepend", id, "--on", on], { cwd: repo, agent: "lead" }).code, 0);
  assert.is(doctor(repo).by.dependencies.status, "ok");

  assert.is(doctor(repo).by.format.status, "ok");
  const ref = "refs/handoff/tasks/b";
  const task = gitOut(repo, "rev-parse", `${ref}:task.json`);
  const marker = sh("sh", ["-c", "printf 'git-handoff 3\\n' | git hash-object -w --stdin"], repo).trim();
  const tree = sh("sh", ["-c", `printf '100644 blob ${marker}\\tformat\\n100644 blob ${task}\\ttask.json\\n' | git mktree`], repo).trim();
  const commit = sh("sh", ["-c", `git commit-tree ${tree} -p ${ref} -m 'from a newer version'`], repo, { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" }).trim();
  gitOut(repo, "update-ref", ref, commit);
  const odd = doctor(repo);
  assert.is(odd.by.format.status, "warn");
  assert.match(odd.by.format.detail, /1 ref\(s\) written in an unknown format version: refs\/handoff\/tasks\/b/);
  const show = cli(["task", "list"], { cwd: repo, agent: "lead" });
  assert.is(show.code, 0);
  assert.is(show.stderr.match(/refs\/handoff\/tasks\/b was written in an unknown format version/g)?.length, 1, show.stderr);
});

test("git hooks: missing, not executable, husky and lefthook lines; git-handoff on the hooks' PATH; agent configs", () => {
  const repo = tempRepo();
  const before = doctor(repo);
  assert.is(before.by["git-hooks"].status, "warn");
  assert.match(before.by["git-hooks"].detail, /pre-commit is not installed/);
  assert.is(before.by["git-hooks"].fix, "git handoff init");
  assert.is(before.by["agent-configs"].status, "warn");
  assert.is(before.by["agent-configs"].fix, "git handoff init");
  assert.is(before.by["hook-path"].status, "warn");
  assert.match(before.by["hook-path"].detail, /git-handoff is not on the PATH/);

  assert.is(cli(["init"], { cwd: repo, agent: "lead" }).code, 0);
  const bin = tempDir("handoff-bin-");
  writeFileSync(join(bin, "git-handoff"), "#!/bin/sh\nexit 0\n");
  chmodSync(join(bin, "git-handoff"), 0o755);
  const PATH = `${bin}:${process.env.PATH}`;
  const after = doctor(repo, { PATH });
  for (const name of ["git-hooks", "hook-path", "agent-configs"]) assert.is(after.by[name].status, "ok", `${name}: ${after.by[name].detail}`);
  assert.match(after.by["agent-configs"].detail, /Claude Code/);

  const hook = join(repo, ".git", "hooks", "pre-commit");
  chmodSync(hook, 0o644);
  const noexec = doctor(repo, { PATH }).by["git-hooks"];
  assert.match(noexec.detail, /pre-commit is not executable/);
  assert.is(noexec.fix, `chmod +x ${hook}`);
  rmSync(hook);
  assert.match(doctor(repo, { PATH }).by["git-hooks"].detail, /pre-commit is not installed/);

  rmSync(join(repo, ".claude"), { recursive: true });
  writeFileSync(join(repo, ".gemini", "settings.json"), "{}\n");
  const agents = doctor(repo, { PATH }).by["agent-configs"];
  assert.is(agents.status, "warn");
  assert.match(agents.detail, /\.gemini\/settings\.json do not run git-handoff/);

  mkdirSync(join(repo, ".husky"));
  writeFileSync(join(repo, ".husky", "pre-commit"), "npx lint-staged\n");
  const husky = doctor(repo, { PATH }).by["git-hooks"];
  assert.match(husky.detail, /husky manages git hooks here and \.husky\/pre-commit, \.husky\/pre-push does not run git-handoff/);
  assert.is(husky.fix, "add to .husky/pre-commit: git-handoff hook pre-commit");
  writeFileSync(join(repo, ".husky", "pre-commit"), "npx lint-staged\ngit-handoff hook pre-commit\n");
  writeFileSync(join(repo, ".husky", "pre-push"), 'git-handoff hook pre-push "$@"\n');
  assert.is(doctor(repo, { PATH }).by["git-hooks"].status, "ok");

  writeFileSync(join(repo, "lefthook.yml"), "pre-commit:\n  commands:\n    lint:\n      run: npx eslint\n");
  assert.match(doctor(repo, { PATH }).by["git-hooks"].detail, /lefthook\.yml does not run git-handoff for pre-commit, pre-push/);
  writeFileSync(join(repo, "lefthook.yml"), "pre-commit:\n  commands:\n    git-handoff:\n      run: git-handoff hook pre-commit\npre-push:\n  commands:\n    git-handoff:\n      run: git-handoff hook pre-push {1} {2}\n");
  assert.is(doctor(repo, { PATH }).by["git-hooks"].status, "ok");
});

test.run();
