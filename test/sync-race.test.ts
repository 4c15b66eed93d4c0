// Clones racing for the same tasks through one remote: exactly one winner per task on the remote,
// and every loser is told who won. Two clones over file://, three over smart HTTP and git daemon.
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanEnv, cleanupTemp, cli, gitOut, seedTasks, tempRepo } from "./support/repo.ts";
import { cloneOf, serveRoot, startDaemon, startHttp, userState, type GitServer } from "./support/servers.ts";
import { bundled } from "./support/bundle.ts";

const RACER = resolve(import.meta.dirname, "support/racer.ts");
const ALL_TASKS = Array.from({ length: 12 }, (_, i) => `race-${String(i).padStart(2, "0")}`);
const PER_CLONE = 4;

const servers: GitServer[] = [];
test.after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  cleanupTemp();
});

interface Attempt {
  id: string;
  ok: boolean;
  holder: string | null;
  code?: string;
  agent: string;
}

function race(repo: string, agent: string, TASKS: string[]): Promise<Attempt[]> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [bundled(RACER), repo, agent, ...TASKS], { env: cleanEnv(), cwd: resolve(import.meta.dirname, "..") });
    let out = "";
    let err = "";
    child.stdout.on("data", (b) => (out += b));
    child.stderr.on("data", (b) => (err += b));
    child.on("close", (code) => {
      if (code !== 0) return rej(new Error(`racer ${agent} exited ${code}: ${err}`));
      res(out.trim().split("\n").map((l) => ({ ...JSON.parse(l), agent })));
    });
  });
}

async function raceThrough(served: ReturnType<typeof serveRoot>, urlFor: (bare: string, name: string) => string, name: string, clones: number, taskCount = 12) {
  const TASKS = ALL_TASKS.slice(0, taskCount);
  const bare = served.bare(name);
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const repos = Array.from({ length: clones }, () => cloneOf(urlFor(bare, name)));
  const users = repos.map(userState);
  await seedTasks(repos[0]!, TASKS.map((id) => ({ id })));
  assert.is(cli(["sync"], { cwd: repos[0]!, agent: "lead" }).code, 0);
  // Clone 1 syncs; the others never do: their claims must learn the remote's state by themselves.
  if (repos[1]) assert.is(cli(["sync"], { cwd: repos[1], agent: "lead" }).code, 0);

  const runs = repos.flatMap((repo, c) => Array.from({ length: PER_CLONE }, (_, p) => race(repo, `agent-${c}-${p}`, TASKS)));
  const attempts = (await Promise.all(runs)).flat();

  const remoteHolder = new Map<string, string>();
  for (const id of TASKS) {
    const t = JSON.parse(gitOut(bare, "show", `refs/handoff/tasks/${id}:task.json`));
    assert.is(t.status, "claimed", id);
    assert.is(t.fence, 1, `${id}: exactly one grant`);
    remoteHolder.set(id, t.claim.agent);
    const claims = gitOut(bare, "log", "--format=%s", `refs/handoff/tasks/${id}`).split("\n").filter((s) => s.startsWith("claimed"));
    assert.is(claims.length, 1, `${id}: one claimed event on the remote, got ${claims.length}`);
  }
  for (const id of TASKS) {
    const mine = attempts.filter((a) => a.id === id);
    assert.is(mine.length, clones * PER_CLONE);
    const winners = mine.filter((a) => a.ok);
    assert.is(winners.length, 1, `${id}: ${winners.map((w) => w.agent).join(", ")}`);
    assert.is(winners[0]!.agent, remoteHolder.get(id));
    for (const loser of mine.filter((a) => !a.ok)) {
      assert.is(loser.code, "held_by_other", `${id} ${loser.agent}: ${(loser as { message?: string }).message}`);
      assert.is(loser.holder, remoteHolder.get(id), `${id}: ${loser.agent} told the wrong winner`);
    }
  }
  repos.forEach((r, i) => assert.is(userState(r), users[i]));
}

test("two clones, four racing processes each, 12 tasks over file://", async () => {
  await raceThrough(serveRoot(), (bare) => `file://${bare}`, "race2", 2);
});

test("three clones, four racing processes each, 12 tasks over git daemon (git://)", async () => {
  const served = serveRoot();
  served.bare("probe");
  const daemon = await startDaemon(served.root, "probe");
  servers.push(daemon);
  await raceThrough(served, (_bare, name) => daemon.url(name), "race3", 3);
});

test("two clones, four racing processes each, over smart HTTP (git http-backend)", async () => {
  const served = serveRoot();
  const http = await startHttp(served.root);
  servers.push(http);
  await raceThrough(served, (_bare, name) => http.url(name), "racehttp", 2, 8);
});

test.run();
