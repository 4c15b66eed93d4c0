import { spawn } from "node:child_process";
import { MAX_OUTPUT_TAIL, type Verification } from "../core/review-record.ts";

/**
 * Runs a verification command with `sh -c` in a worktree, bounded in time (its whole process group
 * is killed at the deadline) and in memory (only the tail of the output is kept, and the count of
 * bytes dropped says so). `onOutput` sees each chunk of its output as it comes (a person watching
 * a terminal); the record keeps the tail either way. `signal` aborted stops it as the deadline does
 * (a worker told to stop): it then has not passed.
 */
export async function runVerification(command: string, cwd: string, timeoutMs: number, at: Date, onOutput?: (chunk: Buffer) => void, signal?: AbortSignal): Promise<Verification> {
  const started = Date.now();
  const keep = MAX_OUTPUT_TAIL * 4; // bytes: enough for MAX_OUTPUT_TAIL characters of UTF-8
  let buf = Buffer.alloc(0);
  let total = 0;
  const env = { ...process.env };
  for (const k of ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX"]) delete env[k];
  const child = spawn("sh", ["-c", command], { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const take = (b: Buffer) => {
    onOutput?.(b);
    total += b.length;
    buf = Buffer.concat([buf, b]);
    if (buf.length > keep * 2) buf = buf.subarray(buf.length - keep);
  };
  child.stdout.on("data", take);
  child.stderr.on("data", take);
  let timedOut = false;
  const killGroup = (sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      /* already gone */
    }
  };
  const end = () => {
    killGroup("SIGTERM");
    setTimeout(() => killGroup("SIGKILL"), 2000).unref();
  };
  const timer = setTimeout(() => {
    timedOut = true;
    end();
  }, timeoutMs);
  if (signal?.aborted) end();
  else signal?.addEventListener("abort", end, { once: true });
  const { code, signal: ended } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("error", () => resolve({ code: 127, signal: null }));
    child.on("close", (c, s) => resolve({ code: c, signal: s }));
  });
  clearTimeout(timer);
  signal?.removeEventListener("abort", end);
  let text = buf.toString("utf8");
  if (text.length > MAX_OUTPUT_TAIL) text = text.slice(text.length - MAX_OUTPUT_TAIL);
  const keptBytes = Buffer.byteLength(text, "utf8");
  const dropped = total - keptBytes;
  const tail = dropped > 0 ? `[… ${dropped} earlier bytes of output not kept]\n${text}` : text;
  return {
    command,
    cwd,
    exit_code: code,
    signal: timedOut ? "timeout" : ended,
    timed_out: timedOut,
    passed: !timedOut && !signal?.aborted && code === 0,
    duration_ms: Date.now() - started,
    output_tail: tail,
    truncated_bytes: Math.max(0, dropped),
    at: at.toISOString(),
  };
}
