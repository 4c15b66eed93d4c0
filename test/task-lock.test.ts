// A native git transaction holding a task ref's lock while `git handoff claim` runs: the claim
// must wait and retry, or give up with exit 3, and never write over the lock holder.
import { existsSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupFixtures, HeldTransaction, lockFile } from "./support/fixtures.ts";
import { cleanupTemp, cli, cliAsync, gitOut, handoffRefs, tempRepo, type CliResult } from "./support/repo.ts";

test.after(() => {
  cleanupTemp();
  cleanupFixtures();
});

const REF = "refs/handoff/tasks/locked";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A repo with task `locked` at A, and B: a valid next commit (same record) an outside writer will install. */
function setup(): { repo: string; a: string; b: string } {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "contended", "--id", "locked"], { cwd: repo, agent: "lead" }).code, 0);
  const a = gitOut(repo, "rev-parse", REF);
  const b = gitOut(repo, "commit-tree", `${a}^{tree}`, "-p", a, "-m", "written by another tool");
  return { repo, a, b };
}

function track(p: Promise<CliResult>): { done: () => boolean; result: Promise<CliResult> } {
  let finished = false;
  const result = p.then((r) => {
    finished = true;
    return r;
  });
  return { done: () => finished, result };
}

test("lock released after ~1s: the claim waits, then lands on top of the lock holder's value", async () => {
  const { repo, a, b } = setup();
  const holder = new HeldTransaction(repo, REF, b, a);
  await holder.prepared();
  assert.ok(existsSync(lockFile(repo, REF)), "git holds the ref's lock file");

  const claim = track(cliAsync(["claim", "locked", "--json"], { cwd: repo, agent: "bob" }));
  await sleep(1000);
  assert.not.ok(claim.done(), "the claim must not finish while the lock is held");
  assert.is(gitOut(repo, "rev-parse", REF), a);
  assert.is(await holder.commit(), 0, holder.output);
  assert.match(holder.output, /commit: ok/);

  const r = await claim.result;
  assert.is(r.code, 0, r.stderr);
  assert.is(r.json.claim.agent, "bob");
  const tip = gitOut(repo, "rev-parse", REF);
  assert.is.not(tip, b);
  assert.is(gitOut(repo, "rev-parse", `${tip}^`), b, "the claim's commit sits on the holder's value");
  assert.is(gitOut(repo, "rev-parse", `${tip}^^`), a);
  assert.not.ok(existsSync(lockFile(repo, REF)));
});

test("lock held past the retry budget: the claim gives up with exit 3 (lost_race); the ref ends as the holder's value", async () => {
  const { repo, a, b } = setup();
  const holder = new HeldTransaction(repo, REF, b, a);
  await holder.prepared();
  const started = Date.now();
  const r = await cliAsync(["claim", "locked", "--json"], { cwd: repo, agent: "bob" });
  const waited = Date.now() - started;
  assert.is(r.code, 3, r.stderr);
  assert.is(r.json.error.code, "lost_race");
  assert.is(r.json.error.recoverable, true);
  // The lock was there before the first try and through every retry: it is named, with what to do.
  assert.match(r.stderr, /^git-handoff: the lock file .*\.lock \(\d+ s old\) stayed in place through every retry: a git or git-handoff process still holds it/);
  assert.ok(waited >= 4000, `retried for ${waited} ms before giving up`);
  assert.is(gitOut(repo, "rev-parse", REF), a, "nothing written while the lock is held");
  assert.ok(existsSync(lockFile(repo, REF)), "the claim did not remove someone else's lock");

  assert.is(await holder.commit(), 0, holder.output);
  assert.is(gitOut(repo, "rev-parse", REF), b);
  assert.is(handoffRefs(repo), `${REF} ${b}`);
  // the state is sound: a claim now works on top of it
  const again = cli(["claim", "locked", "--json"], { cwd: repo, agent: "bob" });
  assert.is(again.code, 0, again.stderr);
  assert.is(gitOut(repo, "rev-parse", `${REF}^`), b);
});

test("lock holder aborts: the claim proceeds from the unchanged value", async () => {
  const { repo, a, b } = setup();
  const holder = new HeldTransaction(repo, REF, b, a);
  await holder.prepared();
  const claim = track(cliAsync(["claim", "locked", "--json"], { cwd: repo, agent: "bob" }));
  await sleep(700);
  assert.not.ok(claim.done());
  assert.is(await holder.abort(), 0, holder.output);
  const r = await claim.result;
  assert.is(r.code, 0, r.stderr);
  assert.is(gitOut(repo, "rev-parse", `${REF}^`), a);
});

test.run();
