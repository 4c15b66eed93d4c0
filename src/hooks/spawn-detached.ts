// A detached process started without node:child_process. The hook that hands a deny or warn
// answer's catch record to a writer (catch-record.ts) starts it after the answer, but the agent
// waits for the hook to exit: loading child_process there (net, dgram and the stream modules,
// ~2.3 ms and ~200 KB of young generation, which then was collected) and its spawn took ~4.5 ms,
// libuv's process handle alone ~1 ms. It is what child_process.spawn wraps, reached as
// src/hooks/stdin.ts reaches the pipe handle; where Node no longer offers it, child_process starts it.
import { spawn } from "node:child_process";
import { nodeBinding } from "../present/node-binding.ts";

interface ProcessHandle {
  onexit: (code: number, signal: string) => void;
  pid: number;
  spawn(options: { file: string; args: string[]; cwd: string; envPairs: string[]; stdio: { type: "ignore" }[]; detached: boolean }): number;
  unref(): void;
  close(): void;
}

function processHandle(): (new () => ProcessHandle) | undefined {
  const Process = nodeBinding<{ Process?: new () => ProcessHandle }>("process_wrap")?.Process;
  return typeof Process === "function" ? Process : undefined;
}

/**
 * Starts `file` with `args` in a session of its own, stdio on /dev/null; resolves at once, or with
 * `wait` once it exited. Throws when it cannot be started (the caller then does the work itself).
 */
export function spawnDetached(file: string, args: string[], o: { cwd: string; env: NodeJS.ProcessEnv; wait: boolean }): Promise<void> {
  const Process = processHandle();
  if (!Process) {
    const child = spawn(file, args, { cwd: o.cwd, detached: true, stdio: "ignore", env: o.env });
    if (!o.wait) return (child.unref(), Promise.resolve());
    return new Promise<void>((resolve) => child.on("exit", () => resolve()).on("error", () => resolve()));
  }
  const handle = new Process();
  let exited = () => {};
  handle.onexit = () => (handle.close(), exited());
  const envPairs = Object.entries(o.env).flatMap(([k, v]) => (v === undefined ? [] : [`${k}=${v}`]));
  const err = handle.spawn({ file, args: [file, ...args], cwd: o.cwd, envPairs, stdio: [{ type: "ignore" }, { type: "ignore" }, { type: "ignore" }], detached: true });
  if (err !== 0) {
    handle.close();
    throw new Error(`could not start ${file} (${err})`);
  }
  if (!o.wait) return (handle.unref(), Promise.resolve());
  return new Promise<void>((resolve) => (exited = resolve));
}
