// Runs the CLI on a pseudo-terminal (python3's pty module): stdin, stdout and stderr are a terminal,
// as when a person types the command. Once `prompt` appears in what it printed, `answer` is typed
// (then Enter, a CR) or the file `touch` is created: a command that waits for that file therefore
// finishes only if its output reached the terminal while it ran.
import { spawn, spawnSync } from "node:child_process";
import { CLI, cleanEnv } from "./repo.ts";

const DRIVER = `
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
sent = False
deadline = time.time() + 80
while time.time() < deadline:
    r, _, _ = select.select([fd], [], [], 0.2)
    if not r:
        continue
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    out += data
    if not sent and os.environ["PTY_PROMPT"].encode() in out:
        if "PTY_ANSWER" in os.environ:
            os.write(fd, (os.environ["PTY_ANSWER"] + "\\r").encode())
        if "PTY_TOUCH" in os.environ:
            open(os.environ["PTY_TOUCH"], "w").close()
        sent = True
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(status))
`;

export function cliOnTerminal(
  args: string[],
  o: { cwd: string; agent: string; prompt: string; answer?: string; touch?: string; env?: NodeJS.ProcessEnv },
): { code: number; output: string } {
  const reply = { ...(o.answer !== undefined && { PTY_ANSWER: o.answer }), ...(o.touch !== undefined && { PTY_TOUCH: o.touch }) };
  const env = cleanEnv({ HANDOFF_AGENT: o.agent, PTY_PROMPT: o.prompt, ...reply, ...o.env });
  const r = spawnSync("python3", ["-c", DRIVER, process.execPath, CLI, ...args], { cwd: o.cwd, env, encoding: "utf8", timeout: 90_000 });
  return { code: r.status ?? 1, output: (r.stdout + r.stderr).replace(/\r\n/g, "\n") };
}

const HANG_UP_DRIVER = `
import json, os, pty, select, sys, time
argv = sys.argv[1:]
shell = os.environ.get("PTY_LEADER") == "shell"
pid, fd = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"]) if shell else os.execvp(argv[0], argv)
if shell:
    os.write(fd, (" ".join(argv) + "\\n").encode())
out = b""
deadline = time.time() + 60
def hang_up():
    on = os.environ.get("HANG_UP_ON")
    at = os.environ.get("HANG_UP_AT")
    return (at is not None and os.path.exists(at)) or (on is not None and on.encode() in out)
while not hang_up() and time.time() < deadline:
    r, _, _ = select.select([fd], [], [], 0.1)
    if r:
        try:
            out += os.read(fd, 4096)
        except OSError:
            break
os.close(fd)
_, status = os.waitpid(pid, 0)
sys.stdout.write(json.dumps({"code": os.waitstatus_to_exitcode(status), "leader": pid, "output": out.decode("utf8", "replace")}))
`;

/**
 * Runs `argv` on a terminal of its own (python3's pty), as the terminal's session leader (`exec`,
 * the default) or typed into an interactive bash leading it (`shell`), and closes the terminal
 * once the file `hangUpAt` exists or `hangUpOn` was printed: the kernel hangs up the session
 * (SIGHUP to its leader) and every later write to the terminal fails with EIO. Resolves with what
 * was printed before, the leader's pid and how it ended (negative: killed by that signal).
 */
export function hangUpTerminal(argv: string[], o: { cwd: string; env: NodeJS.ProcessEnv; hangUpAt?: string; hangUpOn?: string; leader?: "exec" | "shell" }): Promise<{ code: number; leader: number; output: string }> {
  const env = { ...o.env, PTY_LEADER: o.leader ?? "exec", ...(o.hangUpAt && { HANG_UP_AT: o.hangUpAt }), ...(o.hangUpOn && { HANG_UP_ON: o.hangUpOn }) };
  const p = spawn("python3", ["-c", HANG_UP_DRIVER, ...argv], { cwd: o.cwd, env, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  p.stdout!.on("data", (b) => (out += b));
  return new Promise((res) => p.on("close", () => res(JSON.parse(out))));
}
