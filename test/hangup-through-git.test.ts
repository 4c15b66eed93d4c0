// The terminal of `git handoff wait` closing, run through git as users run it. git runs
// git-handoff as its dashed external with clean_on_exit and wait_after_clean (git.c,
// execv_dashed_external): on SIGHUP it passes the signal on to git-handoff, waits for it to end,
// then re-raises it and dies by it. So the wait stops as the first Ctrl-C stops it: its task
// cancelled on the remote, exit 130, nothing left running, no abort in Node's terminal restore.
// Two ways the hang-up comes: to git as the terminal's session leader (a terminal or ssh running
// the command itself), and from an interactive shell, which passes SIGHUP on to its jobs (git and
// git-handoff both get it, and git's copy after).
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { alive, killGroups } from "./support/alive.ts";
import { remoteTask, until } from "./support/handover.ts";
import { CLI, cleanEnv, cleanupTemp } from "./support/repo.ts";
import { hangUpTerminal } from "./support/pty.ts";
import { cloneOf, emptyRemote } from "./support/servers.ts";

/**
 * `git-handoff` for git to find: the built CLI run by a small supervisor that passes on the
 * signals it gets (as git does for its child) and records how the CLI ended, its status or the
 * signal that killed it (negative): git reaps its child without a look, and a Node that aborts
 * restoring a gone terminal does so after every exit handler, so nothing inside could say so.
 * Not from tempDir(): another file's cleanup would remove it.
 */
const BIN = mkdtempSync(join(tmpdir(), "handoff-bin-"));
const ENDS = join(BIN, "ends");
writeFileSync(
  join(BIN, "git-handoff"),
  `#!/usr/bin/env python3
import json, os, signal, sys
pid = os.fork()
if pid == 0:
    os.execv(${JSON.stringify(process.execPath)}, [${JSON.stringify(process.execPath)}, ${JSON.stringify(CLI)}] + sys.argv[1:])
for s in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
    signal.signal(s, lambda sig, _frame: os.kill(pid, sig))
_, status = os.waitpid(pid, 0)
code = os.waitstatus_to_exitcode(status)
with open(${JSON.stringify(ENDS)}, "a") as f:
    f.write(json.dumps({"args": sys.argv[1:], "pid": pid, "pgid": os.getpgid(0), "code": code}) + "\\n")
sys.exit(code if code >= 0 else 128 - code)
`,
);
chmodSync(join(BIN, "git-handoff"), 0o755);

const groups: number[] = [];
test.after(() => {
  killGroups(groups);
  rmSync(BIN, { recursive: true, force: true });
  cleanupTemp();
});

interface End {
  args: string[];
  pid: number;
  pgid: number;
  code: number;
}

/** How the git-handoff run with these first arguments ended, once it has (a line still being written is not read yet). */
function endOf(verb: string): End | undefined {
  if (!existsSync(ENDS)) return undefined;
  const lines = readFileSync(ENDS, "utf8").split("\n").slice(0, -1);
  return lines.map((l) => JSON.parse(l) as End).find((e) => e.args[0] === verb);
}

/** `line` on a terminal of its own, as its session leader or typed into a shell leading it, hung up once `hangUpOn` was printed (support/pty.ts). */
function onTerminal(line: string[], o: { cwd: string; agent: string; hangUpOn: string; leader: "exec" | "shell" }): Promise<{ code: number; leader: number; output: string }> {
  const env = cleanEnv({ PATH: `${BIN}:${process.env.PATH}`, HANDOFF_AGENT: o.agent, HISTFILE: "/dev/null" });
  return hangUpTerminal(line, { cwd: o.cwd, env, hangUpOn: o.hangUpOn, leader: o.leader });
}

for (const leader of ["exec", "shell"] as const) {
  const how = leader === "exec" ? "git leading the terminal's session" : "from an interactive shell";
  test(`closing the terminal of git handoff wait (${how}): the task it created is cancelled on the remote, git-handoff exits 130, nothing left running`, async () => {
    rmSync(ENDS, { force: true });
    const bare = emptyRemote();
    const repo = cloneOf(bare);
    const run = await onTerminal(["git", "handoff", "wait", "--objective", "probe", "--to", "nobody@none", "--json"], { cwd: repo, agent: "alice", hangUpOn: ": queued", leader });
    const id = /created (\S+)/.exec(run.output)?.[1];
    assert.ok(id, run.output);
    // The shell ends at once; git, leading the session, only once git-handoff has.
    await until(() => endOf("wait") !== undefined, "git-handoff to end");
    const end = endOf("wait")!;
    groups.push(end.pgid);
    assert.is(end.code, 130, `${JSON.stringify(end)}\n${run.output}`);
    assert.is(remoteTask(bare, id!).status, "cancelled");
    if (leader === "exec") assert.is(run.code, -1, "git re-raises the SIGHUP once git-handoff has ended, and dies by it");
    await until(() => !alive(-end.pgid), "the command's process group to end", 10_000);
  });
}

test.run();
