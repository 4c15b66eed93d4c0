// Locks that heal: a fetch lock left by a killed process is broken at once; one held by a live
// process is waited on, with a message, within the deadline; a git ref lock left by a killed git
// is named "stale for N s" at once, reported by doctor and removed by doctor --repair.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, cliAsync, gitOut, handoffRefs, tempRepo } from "./support/repo.ts";
import { cloneOf, servedProject } from "./support/servers.ts";

const stops: (() => void)[] = [];
test.after(() => {
  for (const s of stops) s();
  cleanupTemp();
});

function project() {
  const { bare, a } = servedProject();
  mkdirSync(`${a}/.git/handoff`, { recursive: true });
  return { bare, a, lock: `${a}/.git/handoff/fetch-origin.lock` };
}

async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const startOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
};

async function silentServer(): Promise<number> {
  const held: Socket[] = [];
  const server = createServer((s) => void held.push(s));
  await new Promise<void>((res) => server.listen(0, "127.0.0.1", res));
  stops.push(() => {
    for (const s of held) s.destroy();
    server.close();
  });
  return (server.address() as AddressInfo).port;
}

test("a sync killed while it held the fetch lock: the next sync breaks the lock at once", async () => {
  const { a, lock } = project();
  // Make the first sync hang inside the lock (a remote that never answers), then kill -9 it.
  const port = await silentServer();
  const url = gitOut(a, "remote", "get-url", "origin");
  gitOut(a, "remote", "set-url", "origin", `http://127.0.0.1:${port}/project.git`);
  const victim = spawn(process.execPath, [`${import.meta.dirname}/../dist/git-handoff.cjs`, "sync"], { cwd: a, stdio: "ignore" });
  await until(() => existsSync(lock) && readFileSync(lock, "utf8").endsWith("}"), "the fetch lock");
  assert.is(JSON.parse(readFileSync(lock, "utf8")).pid, victim.pid);
  victim.kill("SIGKILL");
  await new Promise((r) => victim.once("exit", r));
  assert.ok(existsSync(lock), "a killed process leaves its lock");

  gitOut(a, "remote", "set-url", "origin", url);
  const start = Date.now();
  const r = await cliAsync(["sync", "--json"], { cwd: a, agent: "lead" });
  assert.is(r.code, 0, r.stderr);
  assert.ok(Date.now() - start < 10_000, `sync took ${Date.now() - start} ms`);
  assert.not.match(r.stderr, /waiting/);
  assert.not.ok(existsSync(lock));
});

test("a lock naming a live pid whose start time differs (a reused pid) is broken at once", () => {
  const { a, lock } = project();
  writeFileSync(lock, JSON.stringify({ pid: process.pid, host: hostname(), start: "1" }));
  const r = cli(["sync"], { cwd: a, agent: "lead" });
  assert.is(r.code, 0, r.stderr);
  assert.not.match(r.stderr, /waiting/);
});

test("a lock held by a live process: waited on with a message after a second, then remote_timeout naming it", async () => {
  const { a, lock } = project();
  const holder = spawn("sleep", ["30"], { stdio: "ignore" });
  stops.push(() => holder.kill());
  await until(() => existsSync(`/proc/${holder.pid}/stat`), "the holder");
  writeFileSync(lock, JSON.stringify({ pid: holder.pid, host: hostname(), start: startOf(holder.pid!) }));
  const local = handoffRefs(a);
  const r = await cliAsync(["sync", "--json"], { cwd: a, agent: "lead", env: { HANDOFF_REMOTE_TIMEOUT_MS: "1000" } });
  assert.is(r.code, 3, r.stderr);
  assert.is(r.json.error.code, "remote_timeout");
  assert.match(r.stderr, new RegExp(`waiting for process ${holder.pid} on`));
  assert.match(r.json.error.message, new RegExp(`process ${holder.pid} .*held .*fetch-origin\\.lock`));
  assert.ok(existsSync(lock), "a live holder's lock is left alone");
  assert.is(handoffRefs(a), local);
});

test("a leftover git ref lock (refs/handoff/leases.lock): refused at once as stale, doctor reports it, doctor --repair removes it", () => {
  const a = tempRepo();
  assert.is(cli(["lease", "src/a.ts", "--exclusive"], { cwd: a, agent: "alice" }).code, 0);
  const stale = `${a}/.git/refs/handoff/leases.lock`;
  writeFileSync(stale, "");
  const old = new Date(Date.now() - 120_000);
  utimesSync(stale, old, old);
  const before = handoffRefs(a);

  const start = Date.now();
  const r = cli(["lease", "src/b.ts", "--exclusive", "--json"], { cwd: a, agent: "alice" });
  assert.is(r.code, 5, r.stderr);
  assert.is(r.json.error.code, "environment");
  assert.match(r.stderr, /leases\.lock is stale for 1[12]\d s/);
  assert.match(r.stderr, /git handoff doctor --repair/);
  assert.ok(Date.now() - start < 4000, "refused at once, not after retries");
  assert.is(handoffRefs(a), before);

  const d = cli(["doctor", "--json"], { cwd: a });
  assert.is(d.code, 2);
  const check = d.json.checks.find((c: any) => c.name === "git-locks");
  assert.is(check.status, "fail");
  assert.match(check.detail, /refs\/handoff\/leases\.lock stale for/);

  // A lock a live git may hold right now (young) is never removed.
  const young = `${a}/.git/refs/handoff/tasks.lock`;
  writeFileSync(young, "");
  const fixed = cli(["doctor", "--repair", "--json"], { cwd: a });
  assert.is(fixed.json.checks.find((c: any) => c.name === "git-locks").status, "ok", fixed.stdout);
  assert.not.ok(existsSync(stale));
  assert.ok(existsSync(young));
  assert.is(cli(["lease", "src/b.ts", "--exclusive"], { cwd: a, agent: "alice" }).code, 0, "the next lease works");
});

test("a ref lock younger than stale that stays through every retry (a killed claim's): named with how to clear it, not blamed on concurrent updates", () => {
  const a = tempRepo();
  assert.is(cli(["task", "add", "a", "--id", "a"], { cwd: a, agent: "lead" }).code, 0);
  const lock = `${a}/.git/refs/handoff/tasks/a.lock`;
  writeFileSync(lock, "");
  const before = handoffRefs(a);
  const r = cli(["claim", "a", "--json"], { cwd: a, agent: "alice" });
  assert.is(r.code, 3, r.stderr);
  assert.is(r.json.error.code, "lost_race");
  assert.is(r.json.error.data.cause, "lingering_lock");
  assert.match(r.stderr, /tasks\/a\.lock \(\d+ s old\) stayed in place through every retry: a git or git-handoff process still holds it, or one that ended \(killed\) left it behind/);
  assert.match(r.json.error.suggestions[1].detail, /git handoff doctor --repair removes it once 30 s old \(in \d+ s\), or remove it by hand: rm .*tasks\/a\.lock/);
  assert.not.match(r.stderr, /concurrent updates/);
  assert.is(handoffRefs(a), before);
});

test("a stale lock on a tracking ref (a killed git fetch): sync names it instead of blaming the remote", () => {
  const { bare, a } = project();
  const b = cloneOf(bare);
  assert.is(cli(["claim", "ship"], { cwd: b, agent: "bob" }).code, 0); // the remote moves on
  const stale = `${a}/.git/refs/handoff-remotes/origin/tasks/ship.lock`;
  mkdirSync(`${a}/.git/refs/handoff-remotes/origin/tasks`, { recursive: true });
  writeFileSync(stale, "");
  const old = new Date(Date.now() - 300_000);
  utimesSync(stale, old, old);
  const r = cli(["sync", "--json"], { cwd: a, agent: "lead" });
  assert.is(r.code, 5, r.stdout + r.stderr);
  assert.is(r.json.error.code, "environment");
  assert.match(r.stderr, /tasks\/ship\.lock is stale for 3\d\d s/);
  assert.is(cli(["doctor", "--repair"], { cwd: a }).code, 0);
  assert.is(cli(["sync"], { cwd: a, agent: "lead" }).code, 0);
});

test.run();
