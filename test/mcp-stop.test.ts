// The MCP server asked to stop (SIGTERM from its host, the last step of the protocol's stdio
// shutdown) while it works: the call in progress still gets its answer and its effect is whole
// (a claim whose push is on the wire lands and is recorded), the writes queued for the push budget
// are pushed, and it exits 0. It exited at once, cutting the call off and leaving the queue.
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { remoteTask, until } from "./support/handover.ts";
import { CLI, cleanEnv, cleanupTemp, cli, gitOut, tempDir } from "./support/repo.ts";
import { cloneOf, emptyRemote, remoteHook } from "./support/servers.ts";

test.after(cleanupTemp);

interface Server {
  pid: number;
  /** Sends a request; resolves with its answer, or null if the server ended without one. */
  request(id: number, method: string, params: unknown): Promise<any>;
  stderr(): string;
  exited: Promise<number | NodeJS.Signals | null>;
  /** The host stops reading our stdout: the next write meets a closed pipe (EPIPE). */
  closeStdout(): void;
  /** The host ends our stdin. */
  endStdin(): void;
}

/** `git handoff mcp` as a host runs it, spoken to line by line, initialized. */
async function server(repo: string, agent: string, env: NodeJS.ProcessEnv = {}): Promise<Server> {
  const child = spawn(process.execPath, [CLI, "mcp"], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: agent, ...env }), stdio: ["pipe", "pipe", "pipe"] });
  const answers = new Map<number, (a: any) => void>();
  let out = "";
  let err = "";
  child.stdout!.on("data", (b) => {
    out += b;
    for (let nl = out.indexOf("\n"); nl >= 0; nl = out.indexOf("\n")) {
      const m = JSON.parse(out.slice(0, nl));
      out = out.slice(nl + 1);
      if (m.id !== undefined) answers.get(m.id)?.(m);
    }
  });
  child.stderr!.on("data", (b) => (err += b));
  const exited = new Promise<number | NodeJS.Signals | null>((res) => child.on("exit", (code, signal) => res(code ?? signal)));
  const s: Server = {
    pid: child.pid!,
    request(id, method, params) {
      child.stdin!.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
      return Promise.race([new Promise((res) => answers.set(id, res)), exited.then(() => null)]);
    },
    stderr: () => err,
    exited,
    closeStdout: () => child.stdout!.destroy(),
    endStdin: () => child.stdin!.end(),
  };
  await s.request(0, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "host", version: "0" } });
  child.stdin!.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  return s;
}

const call = (name: string, args: Record<string, unknown> = {}) => ({ name, arguments: args });
const remoteTip = (bare: string, ref: string) => gitOut(bare, "for-each-ref", "--format=%(objectname)", ref);

test("SIGTERM while claim_task's push is on the wire: the call is answered, the claim landed and is recorded here, exit 0", async () => {
  const bare = emptyRemote();
  const repo = cloneOf(bare);
  assert.is(cli(["task", "add", "ship it", "--id", "ship", "--push"], { cwd: repo, agent: "lead" }).code, 0);
  // A slow remote from here on: each push waits two seconds in its pre-receive hook.
  const pushing = join(tempDir(), "pushing");
  remoteHook(bare, "pre-receive", `touch "${pushing}"; sleep 2`);
  const s = await server(repo, "a1");
  const answer = s.request(1, "tools/call", call("claim_task", { id: "ship" }));
  await until(() => existsSync(pushing), "the claim's push to reach the remote");
  process.kill(s.pid, "SIGTERM");
  const a = await answer;
  assert.ok(a, `no answer: ${s.stderr()}`);
  assert.is(a.result.isError, undefined, JSON.stringify(a.result));
  assert.is(a.result.structuredContent.task.claim.agent, "a1");
  assert.is(await s.exited, 0, s.stderr());
  assert.match(s.stderr(), "stopping: answering the calls in progress");
  assert.is(remoteTask(bare, "ship").claim.agent, "a1");
  const here = cli(["task", "show", "ship", "--json"], { cwd: repo }).json;
  assert.equal([here.status, here.claim?.agent], ["claimed", "a1"]);
});

/**
 * A server whose second heartbeat is written here and queued for the push budget (one deferrable
 * push a minute: the first heartbeat, pushed at once, spent it). `local` is the queued tip.
 */
async function queuedHeartbeat(): Promise<{ bare: string; repo: string; s: Server; ref: string; local: string }> {
  const bare = emptyRemote();
  const seed = cloneOf(bare);
  writeFileSync(join(seed, ".handoff.yaml"), "heartbeat_interval: 1s\n");
  gitOut(seed, "add", ".handoff.yaml");
  gitOut(seed, "commit", "-q", "-m", "policy");
  gitOut(seed, "push", "-q", "origin", "main");
  const repo = cloneOf(bare);
  gitOut(repo, "config", "handoff.maxPushesPerMinute", "1");
  const s = await server(repo, "a1", { HANDOFF_PUSH: "1" });
  const ref = "refs/handoff/agents/a1";
  // Its session starts (pushed at once, the minute's one push); each later call beats its heartbeat.
  assert.ok((await s.request(1, "tools/call", call("load_context", { objective: "stay alive" }))).result);
  await until(() => remoteTip(bare, ref) !== "", "the first heartbeat to be pushed");
  const first = remoteTip(bare, ref);
  await new Promise((r) => setTimeout(r, 1200));
  assert.ok((await s.request(2, "tools/call", call("list_tasks"))).result);
  const local = gitOut(repo, "rev-parse", ref);
  assert.is.not(local, first, "a second heartbeat was written here");
  assert.is(remoteTip(bare, ref), first, "and queued, not pushed");
  return { bare, repo, s, ref, local };
}

test("SIGTERM with a heartbeat queued for the push budget: it is pushed before the server exits", async () => {
  const { bare, s, ref, local } = await queuedHeartbeat();
  process.kill(s.pid, "SIGTERM");
  assert.is(await s.exited, 0, s.stderr());
  assert.is(remoteTip(bare, ref), local, s.stderr());
});

// Many hosts close both pipes to stop a server. The stop answers a blocking call at once, and that
// answer meets a pipe nobody reads (EPIPE): the process ended there, before the queued writes were
// pushed (the push that had started landed only after it, unwaited for). The remote's push is
// slowed, so one cut short is still missing when the server has exited.
test("the host closes stdout and stdin while a call waits: its answer is dropped, the queued heartbeat is still pushed, exit 0", async () => {
  const { bare, repo, s, ref } = await queuedHeartbeat();
  remoteHook(bare, "pre-receive", "sleep 1");
  const watching = s.request(3, "tools/call", call("watch", { timeout_seconds: 30 })); // nothing is ready: it blocks
  await new Promise((r) => setTimeout(r, 300));
  s.closeStdout();
  s.endStdin();
  assert.is(await watching, null, "nobody read its answer");
  assert.is(await s.exited, 0, s.stderr());
  assert.is(remoteTip(bare, ref), gitOut(repo, "rev-parse", ref), `every heartbeat written here is pushed: ${s.stderr()}`);
});

test("the host closes only stdout: the first answer that meets the closed pipe stops the server as stdin's end does", async () => {
  const { bare, repo, s, ref } = await queuedHeartbeat();
  remoteHook(bare, "pre-receive", "sleep 1");
  s.closeStdout();
  // Answered after a second, into the closed pipe; stdin stays open.
  void s.request(3, "tools/call", call("watch", { timeout_seconds: 1 }));
  // A server that kept serving nobody would never exit: a generous deadline, then it is killed and fails.
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([s.exited, new Promise<"still serving">((r) => (timer = setTimeout(() => r("still serving"), 30_000)))]);
  clearTimeout(timer);
  if (ended === "still serving") process.kill(s.pid, "SIGKILL");
  assert.is(ended, 0, s.stderr());
  assert.is(remoteTip(bare, ref), gitOut(repo, "rev-parse", ref), `every heartbeat written here is pushed: ${s.stderr()}`);
});

test.run();
