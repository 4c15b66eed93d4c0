// End to end: real SDK clients spawning the built `git-handoff mcp` over stdio, in temp repos,
// racing each other and the CLI.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, cleanEnv, cleanupTemp, cli, cliAsync, gitOut, tempDir, tempRepo } from "./support/repo.ts";
import { overStdio, type McpHandle } from "./support/mcp.ts";

const open: McpHandle[] = [];
async function server(repo: string, o: Parameters<typeof overStdio>[1] = {}): Promise<McpHandle> {
  const h = await overStdio(repo, o);
  open.push(h);
  return h;
}
test.after.each(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});
test.after(cleanupTemp);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("two agents over stdio: list tools, create and claim, the other is refused with the holder, wait_task returns on completion", async () => {
  const repo = tempRepo();
  const alice = await server(repo, { agent: "alice" });
  const bob = await server(repo, { args: ["--agent", "bob"] });

  const { tools } = await alice.client.listTools();
  for (const name of ["load_context", "create_task", "claim_task", "wait_task", "watch"]) assert.ok(tools.some((t) => t.name === name), name);
  assert.match(alice.client.getInstructions() ?? "", /load_context/);
  // serverInfo names the build, as --version does: the commit as semantic-version build metadata.
  const build = cli(["version", "--json"], { cwd: repo }).json;
  assert.is(alice.client.getServerVersion()?.version, build.commit ? `${build.version}+${build.commit}${build.dirty ? "-dirty" : ""}` : build.version);

  const ctx = await bob.ok("load_context");
  assert.is(ctx.agent.agent, "bob");
  assert.is(ctx.agent_source, "flag");

  const task = (await alice.ok("create_task", { objective: "build the lexer", priority: 2 })).task;
  const claimed = (await alice.ok("claim_task", { id: task.id })).task;
  assert.is(claimed.claim.agent, "alice");

  const r = await bob.call("claim_task", { id: task.id });
  assert.is(r.isError, true);
  const err = (r.structuredContent as any).error;
  assert.is(err.code, "held_by_other");
  assert.is(err.data.holder, "alice");
  assert.is(err.data.expires_at, claimed.claim.expires_at);
  assert.match((r.content[0] as any).text, /held by alice/);

  const waiting = bob.ok("wait_task", { id: task.id });
  await sleep(500);
  await alice.ok("complete_task", { id: task.id, commit: "HEAD", note: "lexer done" });
  const waited = await waiting;
  assert.is(waited.final, true);
  assert.is(waited.task.status, "done");
  assert.is(waited.task.result.note, "lexer done");

  // the CLI reads the same story from git
  const log = gitOut(repo, "log", "--format=%an %s", `refs/handoff/tasks/${task.id}`).split("\n").map((l) => l.split(" ").slice(0, 2).join(" "));
  assert.equal(log, ["alice done", "alice claimed", "alice created"]);
  assert.match(alice.stderr(), /serving .* as alice \(env\)/);
});

test("--wait-max bounds wait_task and watch; the call returns so the agent calls again", async () => {
  const repo = tempRepo();
  const a = await server(repo, { agent: "a", args: ["--wait-max", "1s"] });
  await a.ok("create_task", { objective: "held", id: "held" });
  assert.is(cli(["claim", "held"], { cwd: repo, agent: "other" }).code, 0);
  const t0 = Date.now();
  const w = await a.ok("wait_task", { id: "held", timeout_seconds: 600 });
  assert.is(w.final, false);
  assert.is(w.task.claim.agent, "other");
  assert.ok(Date.now() - t0 < 20_000);
  const idle = await a.ok("watch");
  assert.is(idle.timed_out, true);
});

test("the server exits when its client closes stdin, and refuses to start outside a repository", async () => {
  const repo = tempRepo();
  const child = spawn(process.execPath, [CLI, "mcp", "--agent", "x"], { cwd: repo, env: cleanEnv(), stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (b) => (out += b));
  const exited = new Promise<number | null>((res) => child.on("close", (code) => res(code)));
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } }) + "\n");
  await sleep(300);
  child.stdin.end();
  const code = await Promise.race([exited, sleep(15_000).then(() => "still running" as const)]);
  if (code === "still running") child.kill();
  assert.is(code, 0);
  // stdout carries only protocol messages
  for (const line of out.split("\n").filter(Boolean)) assert.is(JSON.parse(line).jsonrpc, "2.0");

  const notRepo = cli(["mcp"], { cwd: "/" });
  assert.is(notRepo.code, 2);
  assert.match(notRepo.stderr, /not a git repository/);
  const bad = cli(["mcp", "--agent", "../evil"], { cwd: repo });
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /invalid agent name/);
  const unknown = cli(["mcp", "--frobnicate"], { cwd: repo });
  assert.is(unknown.code, 2);
  assert.is(unknown.stderr, 'git-handoff: unknown argument "--frobnicate"; git handoff help mcp shows how to use it\n');
  const help = cli(["mcp", "--help"], { cwd: repo });
  assert.is(help.code, 0);
  assert.match(help.stdout, /--wait-max/);
});

test("a server compiles without inlining once contended: racers spent a third of their CPU in V8's optimising compiler", async () => {
  const dir = tempDir();
  const said = join(dir, "flags.txt");
  const probe = join(dir, "probe.cjs");
  writeFileSync(probe, `const v8 = require("v8"); const set = v8.setFlagsFromString; v8.setFlagsFromString = (f) => { require("fs").appendFileSync(${JSON.stringify(said)}, f + "\\n"); return set(f); };\n`);
  const repo = tempRepo();
  const h = await server(repo, { agent: "a", env: { NODE_OPTIONS: `--require ${probe}` } });
  await h.ok("create_task", { objective: "one", id: "t1" });
  await h.ok("create_task", { objective: "two", id: "t2" });
  await h.ok("claim_task", { id: "t1" });
  await h.ok("release_task", { id: "t1" });
  assert.not.ok(existsSync(said), "a lone server keeps V8's inlining: its warm claims are faster with it");
  // Another writer holds the task's ref for a moment (git's lock file): the claim loses a race and retries.
  const lock = join(repo, ".git/refs/handoff/tasks/t2.lock");
  writeFileSync(lock, "");
  const claimed = h.ok("claim_task", { id: "t2" });
  await sleep(150);
  rmSync(lock);
  assert.is(((await claimed) as { task: { id: string } }).task.id, "t2");
  assert.equal(readFileSync(said, "utf8").split("\n").filter(Boolean), ["--no-turbo-inlining"]);
});

test("a server that changed V8's flags leaves no code cache, which every start under the defaults would reject", async () => {
  const cache = tempDir();
  const caches = () => readdirSync(join(cache, "git-handoff"), { withFileTypes: true }).filter((e) => e.name.endsWith("-mcp.cache")).length;
  const session = async (contended: boolean) => {
    const repo = tempRepo();
    const h = await overStdio(repo, { agent: "a", env: { XDG_CACHE_HOME: cache } });
    await h.ok("create_task", { objective: "one", id: "t1" });
    const lock = join(repo, ".git/refs/handoff/tasks/t1.lock");
    if (contended) writeFileSync(lock, "");
    const claimed = h.ok("claim_task", { id: "t1" });
    if (contended) {
      await sleep(150);
      rmSync(lock);
    }
    await claimed;
    await h.close();
  };
  await session(true);
  for (let i = 0; i < 20 && !existsSync(join(cache, "git-handoff")); i++) await sleep(25);
  assert.is(existsSync(join(cache, "git-handoff")) ? caches() : 0, 0, "a contended server (flags changed) wrote its code cache");
  await session(false);
  for (let i = 0; i < 40 && !(existsSync(join(cache, "git-handoff")) && caches()); i++) await sleep(25);
  assert.is(caches(), 1, "a server that kept the default flags leaves its cache");
});

test("two servers and the CLI race for the same tasks: exactly one winner per task", async () => {
  const repo = tempRepo();
  // Each racer takes many tasks: past the default capacity of one task per agent.
  writeFileSync(join(repo, ".handoff.yaml"), "max_concurrent: 100\n");
  const alice = await server(repo, { agent: "alice" });
  const bob = await server(repo, { agent: "bob" });
  const N = 12;
  for (let i = 0; i < N; i++) await alice.ok("create_task", { objective: `race ${i}`, id: `race-${i}` });

  for (let i = 0; i < N; i++) {
    const id = `race-${i}`;
    const [a, b, c] = await Promise.all([
      alice.call("claim_task", { id }),
      bob.call("claim_task", { id }),
      cliAsync(["claim", id, "--json"], { cwd: repo, agent: "carol" }),
    ]);
    const winners = [!a.isError && "alice", !b.isError && "bob", c.code === 0 && "carol"].filter(Boolean);
    assert.is(winners.length, 1, `${id}: ${JSON.stringify(winners)}`);
    for (const loser of [a, b].filter((r) => r.isError)) {
      const e = (loser.structuredContent as any).error;
      assert.ok(e.code === "held_by_other" || e.code === "lost_race", e.code);
      if (e.code === "held_by_other") assert.is(e.data.holder, winners[0]);
    }
    if (c.code !== 0) assert.is(c.code, 3, c.stderr);
    const shown = cli(["task", "show", id, "--json"], { cwd: repo });
    assert.is(shown.json.claim.agent, winners[0]);
    const claims = gitOut(repo, "log", "--format=%s", `refs/handoff/tasks/${id}`).split("\n").filter((s) => s.startsWith("claimed"));
    assert.is(claims.length, 1, `${id} was granted once`);
  }
});

test("claim_next from two servers and the CLI at once: every task is granted exactly once", async () => {
  const repo = tempRepo();
  // Each racer takes many tasks: past the default capacity of one task per agent.
  writeFileSync(join(repo, ".handoff.yaml"), "max_concurrent: 100\n");
  const alice = await server(repo, { agent: "alice" });
  const bob = await server(repo, { agent: "bob" });
  const N = 16;
  for (let i = 0; i < N; i++) await alice.ok("create_task", { objective: `next ${i}`, id: `next-${i}` });
  const got: Record<string, string[]> = { alice: [], bob: [], carol: [] };
  const viaMcp = async (h: McpHandle, who: string) => {
    for (;;) {
      const r = await h.call("claim_next");
      if (r.isError) {
        const e = (r.structuredContent as any).error;
        if (e.code === "no_task_ready") return;
        assert.is(e.code, "lost_race");
        continue;
      }
      got[who]!.push((r.structuredContent as any).task.id);
    }
  };
  const viaCli = async () => {
    for (;;) {
      const r = await cliAsync(["claim", "--next", "--json"], { cwd: repo, agent: "carol" });
      if (r.code !== 0) return;
      got.carol!.push(r.json.id);
    }
  };
  await Promise.all([viaMcp(alice, "alice"), viaMcp(bob, "bob"), viaCli()]);
  const all = [...got.alice!, ...got.bob!, ...got.carol!].sort();
  assert.equal(all, Array.from({ length: N }, (_, i) => `next-${i}`).sort(), JSON.stringify(got));
});

test.run();
