// Runs the CLI on a pseudo-terminal (python3's pty module): stdin, stdout and stderr are a terminal,
// as when a person types the command. Once `prompt` appears in what it printed, `answer` is typed
// (then Enter, a CR) or the file `touch` is created: a command that waits for that file therefore
// finishes only if its output reached the terminal while it ran.
import { spawnSync } from "node:child_process";
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
