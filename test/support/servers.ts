// Test support: real git servers on 127.0.0.1, started and stopped by the test itself.
// `git daemon` (git://, receive-pack enabled) and smart HTTP through `git http-backend` behind a
// small Node HTTP server. Nothing is mocked.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from "node:net";
import { join, resolve } from "node:path";
import { cleanEnv, cli, gitOut, tempDir, tempRepo } from "./repo.ts";

export interface GitServer {
  /** The URL of `<name>.git` under the served folder. */
  url(name: string): string;
  stop(): Promise<void>;
}

/** A folder of bare repositories; `bare(name)` makes one that accepts pushes over every transport. */
export function serveRoot(): { root: string; bare(name: string): string } {
  const root = tempDir("handoff-remote-");
  return {
    root,
    bare(name: string) {
      const path = `${root}/${name}.git`;
      gitOut(root, "init", "-q", "--bare", "-b", "main", path);
      gitOut(path, "config", "http.receivepack", "true");
      return path;
    },
  };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function waitUntil(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function lsRemoteOk(url: string, cwd: string): boolean {
  return spawnSync("git", ["ls-remote", url], { cwd, env: cleanEnv({ GIT_TERMINAL_PROMPT: "0" }), encoding: "utf8", timeout: 5000 }).status === 0;
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), 3000).unref();
  });
}

/** `git daemon` serving `root` on a free port, pushes enabled. */
export async function startDaemon(root: string, probe: string): Promise<GitServer & { pid: number }> {
  const port = await freePort();
  const child = spawn(
    "git",
    ["daemon", "--reuseaddr", "--listen=127.0.0.1", `--port=${port}`, `--base-path=${root}`, "--export-all", "--enable=receive-pack", "--informative-errors", root],
    { env: cleanEnv(), stdio: ["ignore", "ignore", "pipe"] },
  );
  child.stderr!.resume();
  const url = (name: string) => `git://127.0.0.1:${port}/${name}.git`;
  await waitUntil(() => lsRemoteOk(url(probe), root), "git daemon");
  return { url, pid: child.pid!, stop: () => stopChild(child) };
}

/** Smart HTTP: `git http-backend` behind a small Node server, in its own process; `requestLog` gets a line per request. */
export async function startHttp(root: string, requestLog?: string, opts: { tls?: boolean; basicAuth?: string; connectionLog?: string } = {}): Promise<GitServer & { pid: number }> {
  const env = cleanEnv({
    ...(opts.tls ? { HANDOFF_TEST_TLS: `${TLS_KEY}:${TLS_CERT}` } : {}),
    ...(opts.basicAuth ? { HANDOFF_TEST_BASIC_AUTH: opts.basicAuth } : {}),
    ...(opts.connectionLog ? { HANDOFF_TEST_CONNECTION_LOG: opts.connectionLog } : {}),
  });
  const child = spawn(process.execPath, [resolve(import.meta.dirname, "git-http-server.mjs"), root, ...(requestLog ? [requestLog] : [])], { env, stdio: ["pipe", "pipe", "inherit"] });
  const port = await new Promise<number>((res, rej) => {
    let out = "";
    child.stdout!.on("data", (b: Buffer) => {
      out += b;
      if (out.includes("\n")) res(Number(out.trim()));
    });
    child.on("exit", (code) => rej(new Error(`git http server exited ${code}`)));
  });
  const url = (name: string) => `${opts.tls ? "https" : "http"}://127.0.0.1:${port}/${name}.git`;
  return { url, pid: child.pid!, stop: () => stopChild(child) };
}

/**
 * A TCP proxy in this process in front of 127.0.0.1:`port`. `stall()` makes it a remote that
 * accepts and never answers: from then on it swallows what either side sends, on connections made
 * before (a kept HTTP connection) and after. `pass()` forwards again. Only for tests whose
 * commands run in other processes (this event loop must stay free).
 */
export async function stallingProxy(port: number): Promise<{ port: number; stall(): void; pass(): void; stop(): void }> {
  let stalled = false;
  const sockets = new Set<Socket>();
  const server = createNetServer((client) => {
    const upstream = connect(port, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => {
        sockets.delete(s);
        (s === client ? upstream : client).destroy();
      });
    }
    client.on("data", (b) => void (stalled || upstream.write(b)));
    upstream.on("data", (b) => void (stalled || client.write(b)));
  });
  await new Promise<void>((res) => server.listen(0, "127.0.0.1", res));
  return {
    port: (server.address() as AddressInfo).port,
    stall: () => void (stalled = true),
    pass: () => void (stalled = false),
    stop() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

/** A self-signed certificate for 127.0.0.1 and localhost (valid 2000-2125), its own authority: what GIT_SSL_CAINFO names in tests. */
export const TLS_CERT = resolve(import.meta.dirname, "../fixtures/tls/127.0.0.1.crt");
const TLS_KEY = resolve(import.meta.dirname, "../fixtures/tls/127.0.0.1.key");

/** A clone of `url` with a checkout and a user identity, as a user would have. */
export function cloneOf(url: string): string {
  const dir = tempDir("handoff-clone-");
  gitOut(dir, "clone", "-q", url, ".");
  return dir;
}

/**
 * A bare remote by path and two clones of it: `a`, a fresh repository that added it as origin and
 * pushed main, and `b`, a plain `git clone` of it.
 */
export function twoClones(): { bare: string; a: string; b: string } {
  const root = tempDir("handoff-two-clones-");
  const bare = `${root}/r.git`;
  gitOut(root, "init", "-q", "--bare", bare);
  const a = tempRepo();
  gitOut(a, "remote", "add", "origin", bare);
  gitOut(a, "push", "-q", "origin", "main");
  const b = `${root}/b`;
  gitOut(root, "clone", "-q", bare, b);
  return { bare, a, b };
}

/**
 * A bare remote `name` with a main branch served over smart HTTP (git http-backend), and two
 * clones of it by URL. The server goes into `servers`, for the file to stop after its tests.
 */
export async function twoClonesOverHttp(name: string, servers: GitServer[]): Promise<{ bare: string; a: string; b: string; http: GitServer }> {
  const served = serveRoot();
  const http = await startHttp(served.root);
  servers.push(http);
  const bare = served.bare(name);
  gitOut(tempRepo(), "push", "-q", bare, "main");
  return { bare, a: cloneOf(http.url(name)), b: cloneOf(http.url(name)), http };
}

/** A bare remote (by path) holding a main branch with one empty commit, nothing else. */
export function emptyRemote(): string {
  const bare = serveRoot().bare("project");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  return bare;
}

/** A bare remote (by path) with a main branch, and a clone `a` that pushed the task `ship` to it. */
export function servedProject(): { bare: string; a: string } {
  const bare = serveRoot().bare("project");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const a = cloneOf(bare);
  const added = cli(["task", "add", "ship it", "--id", "ship", "--push"], { cwd: a, agent: "lead" });
  if (added.code !== 0) throw new Error(`task add --push failed: ${added.stderr}`);
  return { bare, a };
}

/** servedProject, the task `ship` written and pushed in-process (seed.ts): for a file that would start that process in every test. */
export async function servedProjectSeeded(): Promise<{ bare: string; a: string }> {
  const { storeTasks } = await import("./seed.ts");
  const bare = serveRoot().bare("project");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const a = cloneOf(bare);
  await storeTasks({ cwd: a, agent: "lead", push: true }, [{ id: "ship", objective: "ship it" }]);
  return { bare, a };
}

/** Installs `body` as the bare repository's hook `name` (pre-receive, update, ...): a remote that misbehaves. */
export function remoteHook(bare: string, name: string, body: string): void {
  writeFileSync(`${bare}/hooks/${name}`, `#!/bin/sh\n${body}\n`);
  chmodSync(`${bare}/hooks/${name}`, 0o755);
}

/** What sync must never touch: the user's remote config and branch and tag refs. */
export function userState(repo: string): string {
  const config = spawnSync("git", ["config", "--get-regexp", "^(remote|branch)\\."], { cwd: repo, env: cleanEnv(), encoding: "utf8" }).stdout;
  const refs = gitOut(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/", "refs/tags/", "refs/remotes/");
  return `${config}\n${refs}`;
}

/**
 * One remote ("project", with a `main`) served three ways at once: by path, by a `git daemon` and
 * by `git http-backend`, both started here and pushed to `servers` for the caller to stop; `lead`
 * a clone of it by path. For tests of what each in-process transport does alike.
 */
export async function servedThreeWays(servers: GitServer[]): Promise<{ bare: string; lead: string; urls: readonly (readonly ["path" | "daemon" | "http", string])[] }> {
  const root = serveRoot();
  const bare = root.bare("project");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const daemon = await startDaemon(root.root, "project");
  servers.push(daemon);
  const http = await startHttp(root.root);
  servers.push(http);
  const urls = [["path", bare], ["daemon", daemon.url("project")], ["http", http.url("project")]] as const;
  return { bare, lead: cloneOf(bare), urls };
}

/** The largest file under a clone's object folder, in bytes: what a refused fetch must not have written. */
export function largestObjectFile(repo: string): number {
  let max = 0;
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else max = Math.max(max, statSync(p).size);
    }
  };
  walk(join(repo, ".git/objects"));
  return max;
}
