// The terminal going away under `git handoff worker | wait` (its window closed, an ssh connection
// dropped): SIGHUP, and from then on every write to the terminal fails (EIO; EPIPE on a pipe whose
// reader ended). It stops them as the first Ctrl-C does: the cleanup runs to its end, whatever
// its lines meet. Unhandled, SIGHUP killed them at once: the task left claimed or queued.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { alive, killGroups } from "./support/alive.ts";
import { remoteTask, script, until } from "./support/handover.ts";
import { CLI, cleanEnv, cleanupTemp, cli, tempDir, tempRepo } from "./support/repo.ts";
import { hangUpTerminal } from "./support/pty.ts";
import { cloneOf, emptyRemote } from "./support/servers.ts";

const groups: number[] = [];
test.after(() => {
  killGroups(groups);
  cleanupTemp();
});

/** The CLI on a terminal of its own, hung up once `hangUpAt` exists or it printed `hangUpOn` (support/pty.ts). */
function onTerminalUntil(args: string[], o: { cwd: string; agent: string; hangUpAt?: string; hangUpOn?: string }): Promise<{ code: number; output: string }> {
  return hangUpTerminal([process.execPath, CLI, ...args], { cwd: o.cwd, env: cleanEnv({ HANDOFF_AGENT: o.agent }), ...(o.hangUpAt && { hangUpAt: o.hangUpAt }), ...(o.hangUpOn && { hangUpOn: o.hangUpOn }) });
}

test("closing the terminal of git handoff worker: the command stopped, its task released and its folders removed, exit 130", async () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "long job", "--id", "long"], { cwd: repo, agent: "lead" }).code, 0);
  const seen = join(tempDir(), "seen");
  const job = script(`echo "$(ps -o pgid= $$ | tr -d ' ') $PWD" > "${seen}.tmp" && mv "${seen}.tmp" "${seen}"; sleep 40`);
  const run = await onTerminalUntil(["worker", "--exec", job, "--poll", "200ms"], { cwd: repo, agent: "bot", hangUpAt: seen });
  const [pgid, worktree] = readFileSync(seen, "utf8").trim().split(" ") as [string, string];
  groups.push(Number(pgid));
  assert.is(run.code, 130, run.output);
  const t = cli(["task", "show", "long", "--json"], { cwd: repo }).json;
  assert.equal([t.status, t.claim], ["todo", null], run.output);
  await until(() => !alive(-Number(pgid)), "the command's process group to end", 10_000);
  assert.not.ok(existsSync(worktree), `${worktree} was left behind`);
  // Nobody was left to read its summary: the session it declared ended all the same.
  const agent = cli(["agents", "--json"], { cwd: repo }).json.agents.find((a: { agent: string }) => a.agent === "bot");
  assert.is(agent?.status, "disconnected", JSON.stringify(agent));
});

test("closing the terminal of git handoff wait --json: the task it created is cancelled on the remote, exit 130 though its answer cannot be written", async () => {
  const bare = emptyRemote();
  const repo = cloneOf(bare);
  const run = await onTerminalUntil(["wait", "--objective", "probe", "--to", "nobody@none", "--json"], { cwd: repo, agent: "alice", hangUpOn: ": queued" });
  const id = /created (\S+)/.exec(run.output)![1]!;
  assert.is(run.code, 130, run.output);
  assert.is(remoteTask(bare, id).status, "cancelled");
});

test("SIGHUP to git handoff wait whose output pipes are closed: the task it created is cancelled on the remote, exit 130", async () => {
  const bare = emptyRemote();
  const repo = cloneOf(bare);
  const p = spawn(process.execPath, [CLI, "wait", "--objective", "probe", "--to", "nobody@none", "--json"], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: "alice" }), stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  p.stderr!.on("data", (b) => (err += b));
  const exited = new Promise<number | NodeJS.Signals | null>((res) => p.on("exit", (code, signal) => res(code ?? signal)));
  await until(() => /: queued/.test(err), "the wait to see its task queued");
  const id = /created (\S+)/.exec(err)![1]!;
  // Whoever read its output is gone: each later line it writes fails with EPIPE.
  p.stdout!.destroy();
  p.stderr!.destroy();
  p.kill("SIGHUP");
  assert.is(await exited, 130, err);
  assert.is(remoteTask(bare, id).status, "cancelled");
});

test.run();
