// Starts `git handoff dashboard` as a real process and reads the one-time link it prints.
import { spawn, type ChildProcess } from "node:child_process";
import { CLI, cleanEnv } from "./repo.ts";

export interface DashboardProcess {
  /** The one-time link (http://127.0.0.1:PORT/auth?token=...). */
  link: string;
  origin: string;
  port: number;
  child: ChildProcess;
  stderr(): string;
  stop(): Promise<number | null>;
}

export function startDashboard(cwd: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<DashboardProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, "dashboard", "--port", "0", ...args], { cwd, env: cleanEnv(env), stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`dashboard did not print its link within 20 s: ${out} ${err}`));
    }, 20_000);
    child.stderr!.on("data", (b) => (err += b));
    child.stdout!.on("data", (b) => {
      out += b;
      const m = /(http:\/\/127\.0\.0\.1:(\d+))\/auth\?token=[0-9a-f]+/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        link: m[0],
        origin: m[1]!,
        port: Number(m[2]),
        child,
        stderr: () => err,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done(child.exitCode);
            child.once("exit", (code) => done(code));
            child.kill("SIGTERM");
          }),
      });
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`dashboard exited ${code}: ${err}`));
    });
  });
}
