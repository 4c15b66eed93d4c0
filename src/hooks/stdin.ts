// Hook payloads arrive on stdin. Reading is bounded in size and time: a hook must never hang an
// agent, even when nothing (or far too much) is piped in.
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { fail } from "../core/errors.ts";
import { readToEnd } from "../git/read-to-end.ts";
import { nodeBinding } from "../present/node-binding.ts";

export const MAX_PAYLOAD_BYTES = 4 * 1024 * 1024;

export async function readStdin(timeoutMs = 5000, maxBytes = MAX_PAYLOAD_BYTES): Promise<string> {
  return readStdinSync(timeoutMs, maxBytes) ?? readStdinAsync(timeoutMs, maxBytes);
}

/**
 * Touching `process.stdin` costs a cold process ~3.5 ms (it loads net and streams), a twentieth of
 * Node's start, before every agent edit. A file is read directly; a pipe on Linux is reopened
 * through /proc non-blocking and polled, so a writer that never closes still cannot hang us past
 * the deadline. A socket (what an agent written in Node hands its hooks: child_process's pipes are
 * socket pairs) cannot be reopened so: it is made non-blocking where it is, as the stream would
 * (nonBlocking), and polled the same. Anything else (other systems) returns null: use the stream.
 */
function readStdinSync(timeoutMs: number, maxBytes: number): string | null {
  let st;
  try {
    st = fstatSync(0);
  } catch {
    return null;
  }
  if (st.isFile()) {
    if (st.size > maxBytes) fail("invalid_input", `hook payload is larger than ${maxBytes} bytes`);
    return readFileSync(0, "utf8");
  }
  if (process.platform !== "linux") return null;
  let fd: number;
  if (st.isSocket()) {
    if (!nonBlocking(0)) return null;
    fd = 0;
  } else if (st.isFIFO()) {
    try {
      fd = openSync("/proc/self/fd/0", constants.O_RDONLY | constants.O_NONBLOCK);
    } catch {
      return null;
    }
  } else return null;
  const deadline = Date.now() + timeoutMs;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  const again = () => {
    if (Date.now() > deadline) fail("invalid_input", `no end of input on stdin after ${timeoutMs} ms`);
    Atomics.wait(nap, 0, 0, 0.25); // short naps: the payload usually arrives within a millisecond
  };
  try {
    return readToEnd(fd, maxBytes, again, () => fail("invalid_input", `hook payload is larger than ${maxBytes} bytes`)).toString("utf8");
  } finally {
    if (fd !== 0) closeSync(fd);
  }
}

/**
 * Sets O_NONBLOCK on a socket descriptor through libuv's pipe handle, which does only that when
 * opened on it; process.stdin's net.Socket does the same and loads net and the stream modules for
 * it (~75 KB of the young generation's first megabyte, which the answer then overflows into a
 * collection). The handle is left open (closing it would close the descriptor) and never read
 * from, so it keeps nothing alive. false when Node no longer offers it: the stream reads instead.
 */
function nonBlocking(fd: number): boolean {
  const wrap = nodeBinding<PipeWrap>("pipe_wrap");
  if (!wrap) return false;
  try {
    return new wrap.Pipe(wrap.constants.SOCKET).open(fd) === 0;
  } catch {
    return false;
  }
}

interface PipeWrap {
  Pipe: new (type: number) => { open(fd: number): number };
  constants: { SOCKET: number };
}

function readStdinAsync(timeoutMs: number, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stdin = process.stdin;
    if (stdin.isTTY) return resolve("");
    const done = (err: Error | null) => {
      clearTimeout(timer);
      stdin.removeAllListeners("data");
      stdin.removeAllListeners("end");
      stdin.pause();
      (stdin as unknown as { unref?: () => void }).unref?.();
      if (err) reject(err);
      else resolve(Buffer.concat(chunks).toString("utf8"));
    };
    const timer = setTimeout(() => {
      try {
        fail("invalid_input", `no end of input on stdin after ${timeoutMs} ms`);
      } catch (e) {
        done(e as Error);
      }
    }, timeoutMs);
    timer.unref();
    stdin.on("data", (b: Buffer) => {
      size += b.length;
      if (size > maxBytes) {
        try {
          fail("invalid_input", `hook payload is larger than ${maxBytes} bytes`);
        } catch (e) {
          done(e as Error);
        }
        return;
      }
      chunks.push(b);
    });
    stdin.on("end", () => done(null));
    stdin.on("error", (e) => done(e));
  });
}

/** Parses a JSON object payload, or fails with invalid_input naming the problem. */
export function parsePayload(text: string, hook: string): Record<string, unknown> {
  if (!text.trim()) fail("invalid_input", `${hook}: empty payload on stdin (expected the agent's JSON)`);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    fail("invalid_input", `${hook}: payload is not valid JSON (${(e as Error).message.split("\n")[0]})`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) fail("invalid_input", `${hook}: payload is not a JSON object`);
  return v as Record<string, unknown>;
}
