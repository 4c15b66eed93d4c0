// The per-agent capacity lock (.git/handoff/capacity-<hash>.lock) is never left without its owner
// record, which only age could break: a claim killed while taking it leaves no lock. One left
// without an owner (by an older build) is stale to doctor, removed by --repair past a few seconds,
// and a claim waiting on the turn says so.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fnv1a32, hex32 } from "../src/core/fnv.ts";
import { CLI, cleanEnv, cleanupTemp, cli, cliAsync, tempRepo } from "./support/repo.ts";

const stops: (() => void)[] = [];
test.after(() => {
  for (const s of stops) s();
  cleanupTemp();
});

const lockOf = (repo: string, agent: string) => `${repo}/.git/handoff/capacity-${hex32(fnv1a32(agent))}.lock`;

function twoTasks(): string {
  const repo = tempRepo();
  for (const id of ["a", "b"]) assert.is(cli(["task", "add", id, "--id", id], { cwd: repo, agent: "lead" }).code, 0);
  return repo;
}

function handoffLocks(repo: string, repair = false) {
  const r = cli(["doctor", "--json", ...(repair ? ["--repair"] : [])], { cwd: repo, agent: "lead" });
  return (r.json.checks as { name: string; status: string; detail: string }[]).find((c) => c.name === "handoff-locks")!;
}

test("a claim killed while it takes the capacity lock leaves no lock without an owner: the agent's next claim goes at once", () => {
  const repo = twoTasks();
  const lock = lockOf(repo, "alice");
  // Killed where the lock's name gets its content: the first write to it, or the link that puts it in place.
  const r = spawnSync(
    "strace",
    ["-f", "-qq", "-o", "/dev/null", "-P", lock, "-e", "trace=write,pwrite64,link,linkat", "-e", "inject=write,pwrite64,link,linkat:signal=KILL:when=1", process.execPath, CLI, "claim", "a"],
    { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: "alice" }), encoding: "utf8" },
  );
  if (r.error) throw new Error(`this test needs strace (.ci/run installs it): ${r.error.message}`);
  assert.is(r.signal, "SIGKILL", r.stderr);
  assert.ok(!existsSync(lock) || readFileSync(lock, "utf8").includes('"pid"'), "a lock left without its owner");
  const started = Date.now();
  const next = cli(["claim", "b"], { cwd: repo, agent: "alice" });
  assert.is(next.code, 0, next.stderr);
  assert.ok(Date.now() - started < 4000, `the next claim took ${Date.now() - started} ms`);
  assert.not.match(next.stderr, /waiting/);
  // The owner record the killed claim had not linked yet is tidied by doctor --repair.
  handoffLocks(repo, true);
  assert.equal(readdirSync(`${repo}/.git/handoff`).filter((n) => n.includes(".lock.new-")), []);
});

test("an owner-less capacity lock (left by an older build): doctor calls it stale, --repair removes it once a few seconds old", () => {
  const repo = twoTasks();
  const lock = lockOf(repo, "alice");
  writeFileSync(lock, "");
  const fresh = handoffLocks(repo, true);
  assert.is(fresh.status, "warn");
  assert.match(fresh.detail, /kept capacity-[0-9a-f]{8}\.lock/);
  assert.ok(existsSync(lock), "a lock seconds old is left alone");
  const old = (Date.now() - 10_000) / 1000;
  utimesSync(lock, old, old);
  const seen = handoffLocks(repo);
  assert.is(seen.status, "warn");
  assert.match(seen.detail, /capacity-[0-9a-f]{8}\.lock \(no owner recorded, 1\d s old\)/);
  assert.not.match(seen.detail, /live process/);
  const repaired = handoffLocks(repo, true);
  assert.is(repaired.status, "ok");
  assert.match(repaired.detail, /removed 1 stale lock/);
  assert.not.ok(existsSync(lock));
});

test("a claim waiting on another claim's capacity turn says so once on stderr, then claims when the holder is gone", async () => {
  const repo = twoTasks();
  const holder = spawn("sleep", ["3"], { stdio: "ignore" });
  stops.push(() => holder.kill());
  while (!existsSync(`/proc/${holder.pid}/stat`)) await new Promise((r) => setTimeout(r, 10));
  const stat = readFileSync(`/proc/${holder.pid}/stat`, "latin1");
  const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  writeFileSync(lockOf(repo, "alice"), JSON.stringify({ pid: holder.pid, host: hostname(), start }));
  const r = await cliAsync(["claim", "a"], { cwd: repo, agent: "alice" });
  assert.is(r.code, 0, r.stderr);
  const said = r.stderr.split("\n").filter((l) => /waiting for process/.test(l));
  assert.is(said.length, 1, r.stderr);
  assert.match(said[0]!, new RegExp(`claim of alice: waiting for process ${holder.pid} on .*capacity-[0-9a-f]{8}\\.lock`));
});

test.run();
