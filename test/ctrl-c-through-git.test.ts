// Ctrl-C on `git handoff wait | worker | loop run`, run through git as users do. git runs
// git-handoff as its dashed external and passes its own copy of the terminal's SIGINT on to it, so
// one Ctrl-C can arrive twice, milliseconds apart: the second copy must not count as "Ctrl-C
// again, quit at once", which skipped the cleanup the docs promise. A real second Ctrl-C later
// still quits at once.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { alive } from "./support/alive.ts";
import { remoteTask, script, until } from "./support/handover.ts";
import { CLI, cleanEnv, cleanupTemp, cli, tempDir, tempRepo } from "./support/repo.ts";
import { cloneOf, emptyRemote } from "./support/servers.ts";

/**
 * `git-handoff` for git to find: the built CLI, loaded by a script that appends its arguments and
 * exit status to EXITS, so the status git-handoff itself ended with is seen (git, killed by the
 * signal, reports only that). Not from tempDir(): another file's cleanup would remove it.
 */
const BIN = mkdtempSync(join(tmpdir(), "handoff-bin-"));
const EXITS = join(BIN, "exits");
writeFileSync(
  join(BIN, "git-handoff"),
  `#!${process.execPath}\nprocess.on("exit", (code) => require("node:fs").appendFileSync(${JSON.stringify(EXITS)}, JSON.stringify({ args: process.argv.slice(2), code }) + "\\n"));\nrequire(${JSON.stringify(CLI)});\n`,
);
chmodSync(join(BIN, "git-handoff"), 0o755);
const groups: number[] = [];
test.after(() => {
  for (const g of groups) killGroup(g);
  rmSync(BIN, { recursive: true, force: true });
  cleanupTemp();
});

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    /* gone */
  }
}

interface ThroughGit {
  git: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** git's own end: it re-raises the signal once git-handoff has ended. */
  ended: Promise<NodeJS.Signals | number | null>;
}

/** `git handoff ARGS`, git leading a process group of its own, as a shell's foreground job. */
function gitHandoff(args: string[], cwd: string, agent: string, env: NodeJS.ProcessEnv = {}): ThroughGit {
  const git = spawn("git", ["handoff", ...args], { cwd, detached: true, env: cleanEnv({ PATH: `${BIN}:${process.env.PATH}`, HANDOFF_AGENT: agent, ...env }), stdio: ["ignore", "pipe", "pipe"] });
  groups.push(git.pid!);
  let out = "";
  let err = "";
  git.stdout!.on("data", (b) => (out += b));
  git.stderr!.on("data", (b) => (err += b));
  const ended = new Promise<NodeJS.Signals | number | null>((res) => git.on("close", (code, signal) => res(signal ?? code)));
  return { git, stdout: () => out, stderr: () => err, ended };
}

const state = (pid: number) => readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "")[0];

/**
 * One Ctrl-C at the terminal: SIGINT to the whole group. git is held (SIGSTOP) until git-handoff
 * has taken the terminal's copy (it says it is stopping), then let go, so the copy git passes on
 * arrives as a signal of its own, as it does in about a third of real Ctrl-Cs (otherwise the
 * kernel merges the two).
 */
async function ctrlC(p: ThroughGit, stopping: string): Promise<void> {
  const pid = p.git.pid!;
  process.kill(pid, "SIGSTOP");
  await until(() => state(pid) === "T", "git to be held");
  // Let go the moment it says so (not at the next poll): its cleanup is still under way.
  const said = new Promise<void>((res) => {
    const look = () => {
      if (!p.stderr().includes(stopping)) return;
      p.git.stderr!.off("data", look);
      res();
    };
    p.git.stderr!.on("data", look);
  });
  process.kill(-pid, "SIGINT");
  await said;
  process.kill(pid, "SIGCONT");
}

/** The exit status git-handoff ended with, for the run whose arguments start with `verb`. */
function exitOf(verb: string): number | undefined {
  if (!existsSync(EXITS)) return undefined;
  const runs = readFileSync(EXITS, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { args: string[]; code: number });
  return runs.filter((r) => r.args.join(" ").startsWith(verb)).at(-1)?.code;
}

test("Ctrl-C on git handoff wait: the task it created is cancelled on the remote, exit 130", async () => {
  // As handed to another machine: the task, and its cancel, go to the sync remote at once.
  const bare = emptyRemote();
  const repo = cloneOf(bare);
  const p = gitHandoff(["wait", "--objective", "probe", "--to", "nobody@none", "--json"], repo, "alice");
  await until(() => /: queued/.test(p.stderr()), "the wait to see its task queued");
  await ctrlC(p, "interrupted: stopping");
  assert.is(await p.ended, "SIGINT", p.stderr());
  assert.is(exitOf("wait"), 130, p.stderr());
  const out = JSON.parse(p.stdout());
  assert.equal([out.status, out.code], ["cancelled", "interrupted"]);
  assert.match(p.stderr(), `${out.id}: cancelled (interrupted)`);
  assert.is(remoteTask(bare, out.id).status, "cancelled");
});

test("Ctrl-C on git handoff worker: the command stopped, its task released and its folders removed, exit 130", async () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "long job", "--id", "long"], { cwd: repo, agent: "lead" }).code, 0);
  const seen = join(tempDir(), "seen");
  const job = script(`echo "$(ps -o pgid= $$ | tr -d ' ') $PWD" > "${seen}.tmp" && mv "${seen}.tmp" "${seen}"; sleep 40`);
  const p = gitHandoff(["worker", "--exec", job, "--poll", "200ms"], repo, "bot");
  await until(() => existsSync(seen), "the command to start");
  const [pgid, worktree] = readFileSync(seen, "utf8").trim().split(" ") as [string, string];
  groups.push(Number(pgid));
  await ctrlC(p, "stopping: releasing the tasks in progress");
  assert.is(await p.ended, "SIGINT", p.stderr());
  assert.is(exitOf("worker"), 130, p.stderr());
  assert.match(p.stderr(), "long: stopped the command and released the task");
  assert.match(p.stderr(), "worker stopped: 0 done, 0 failed, 0 cancelled, 1 released");
  const t = cli(["task", "show", "long", "--json"], { cwd: repo }).json;
  assert.equal([t.status, t.claim], ["todo", null]);
  await until(() => !alive(-Number(pgid)), "the command's process group to end", 10_000);
  assert.not.ok(existsSync(worktree), `${worktree} was left behind`);
});

test("Ctrl-C on git handoff loop run: the loop stopped as loop stop does (agent ended, task released), exit 130", async () => {
  const repo = tempRepo();
  const home = tempDir();
  assert.is(cli(["task", "add", "docs", "--id", "docs", "--scope", "docs/**"], { cwd: repo, agent: "lead" }).code, 0);
  const p = gitHandoff(["loop", "run", "--agent-cmd", "sleep 60", "--poll", "200ms"], repo, "lead", { TMPDIR: home });
  await until(() => /u1: agent \S+ started/.test(p.stderr()), "the unit's agent to start");
  const unit = cli(["loop", "status", "--json"], { cwd: repo }).json.units[0];
  groups.push(unit.pid);
  await ctrlC(p, "stopping the loop");
  assert.is(await p.ended, "SIGINT", p.stderr());
  assert.is(exitOf("loop run"), 130, p.stderr());
  const rec = cli(["loop", "status", "--json"], { cwd: repo }).json;
  assert.equal([rec.phase, rec.units[0].phase], ["stopped", "stopped"]);
  await until(() => !alive(unit.pid), "the unit's agent to end", 10_000);
  assert.is(cli(["task", "show", "docs", "--json"], { cwd: repo }).json.status, "todo");
  assert.not.ok(existsSync(unit.worktree), `${unit.worktree} was left behind`);
});

test("a second Ctrl-C a while after the first quits at once (exit 130) without waiting for the cleanup", async () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "stubborn", "--id", "stubborn"], { cwd: repo, agent: "lead" }).code, 0);
  const seen = join(tempDir(), "seen");
  // A command that ignores TERM: the worker gives it 2 s before KILL, time for a second Ctrl-C.
  const job = script(`trap '' TERM; ps -o pgid= $$ | tr -d ' ' > "${seen}.tmp" && mv "${seen}.tmp" "${seen}"; sleep 40`);
  const p = gitHandoff(["worker", "--exec", job, "--poll", "200ms"], repo, "bot");
  await until(() => existsSync(seen), "the command to start");
  groups.push(Number(readFileSync(seen, "utf8").trim()));
  await ctrlC(p, "stopping: releasing the tasks in progress");
  await new Promise((r) => setTimeout(r, 1300));
  assert.is(p.git.exitCode ?? p.git.signalCode, null, `the first Ctrl-C ended it already: ${p.stderr()}`);
  process.kill(-p.git.pid!, "SIGINT");
  assert.is(await p.ended, "SIGINT", p.stderr());
  assert.is(exitOf("worker"), 130, p.stderr());
  assert.not.match(p.stderr(), "worker stopped:");
  assert.is(cli(["task", "show", "stubborn", "--json"], { cwd: repo }).json.status, "claimed");
});

test.run();
