// Turns at exclusive writes among the long-running processes of one machine (write-turn.ts): one
// holder at a time, a dead holder's turn broken at once, a live holder that never gives back only
// delays the others (bounded), and what dead processes left behind is swept.
import { spawnSync } from "node:child_process";
import { existsSync, linkSync, lstatSync, mkdirSync, readdirSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { acquireOwnedLock, readOwner, selfOwner } from "../src/git/owned-lock.ts";
import { WriteTurns } from "../src/git/write-turn.ts";
import { cleanupTemp, tempDir } from "./support/repo.ts";

test.after(cleanupTemp);

/** The pid of a process that has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ["-e", "0"]).pid!;
}

test("one holder at a time: the second waits until the first gives its turn back", async () => {
  const dir = tempDir();
  const a = new WriteTurns(dir);
  const b = new WriteTurns(dir);
  const order: string[] = [];
  const turnA = await a.take("exclusive");
  assert.is(turnA.waited, false, "a free turn is taken at once");
  const giveA = turnA.give;
  order.push("a has it");
  const bTakes = b.take("exclusive").then((turn) => {
    order.push("b has it");
    assert.is(turn.waited, true, "b knows it was contended");
    return turn.give;
  });
  await new Promise((r) => setTimeout(r, 20));
  order.push("a gives back");
  giveA();
  const giveB = await bTakes;
  assert.equal(order, ["a has it", "a gives back", "b has it"]);
  assert.ok(existsSync(`${dir}/exclusive.turn`));
  giveB();
  giveB(); // giving back twice is harmless
  assert.not.ok(existsSync(`${dir}/exclusive.turn`));
  a.close();
  b.close();
  assert.equal(readdirSync(dir), [], "owner files removed on close");
});

test("a turn whose holder is gone is broken at once; leftovers of dead processes are swept", async () => {
  const dir = tempDir();
  mkdirSync(dir, { recursive: true });
  const pid = deadPid();
  writeFileSync(`${dir}/${pid}-dead.owner`, JSON.stringify({ pid, host: hostname(), start: null }));
  linkSync(`${dir}/${pid}-dead.owner`, `${dir}/exclusive.turn`);
  const t = new WriteTurns(dir);
  const { give } = await t.take("exclusive");
  const names = readdirSync(dir);
  assert.ok(names.includes("exclusive.turn"), "the turn is now ours");
  assert.not.ok(names.some((n) => n.startsWith(`${pid}-`)), "the dead process's owner file is gone");
  give();
  t.close();
  assert.equal(readdirSync(dir), []);
});

test("a live holder that never gives back delays the next writer only up to the bound, and keeps its turn", async () => {
  const dir = tempDir();
  const holder = new WriteTurns(dir);
  const waiter = new WriteTurns(dir);
  const keep = (await holder.take("exclusive")).give;
  const late = await waiter.take("exclusive"); // resolves after the bound, without the turn
  assert.is(late.waited, true);
  late.give();
  assert.ok(existsSync(`${dir}/exclusive.turn`), "the holder's turn is untouched");
  keep();
  assert.not.ok(existsSync(`${dir}/exclusive.turn`));
  holder.close();
  waiter.close();
});

// A turn given back is handed over (a rename of the waiter's place onto the turn), waking that
// waiter alone: eight racers each woken at every turn given back cost more than the handing.
test("a turn given back is handed to the writer queued longest, in one step; a waiter that gives up leaves no place", async () => {
  const dir = tempDir();
  const [a, b, c] = [new WriteTurns(dir), new WriteTurns(dir), new WriteTurns(dir)];
  const turn = `${dir}/exclusive.turn`;
  const giveA = (await a.take("exclusive")).give;
  const order: string[] = [];
  const bTakes = b.take("exclusive").then((t) => (order.push("b"), t));
  await new Promise((r) => setTimeout(r, 5));
  const cTakes = c.take("exclusive").then((t) => (order.push("c"), t));
  await new Promise((r) => setTimeout(r, 5));
  const queued = () => readdirSync(dir).filter((n) => n.includes(".queued-"));
  assert.is(queued().length, 2, "both waiters queued");
  giveA();
  assert.is(lstatSync(turn).ino, b.ownerFile()!.ino, "b holds the turn the moment a gives it back: no writer could take it between");
  const turnB = await bTakes;
  assert.is(turnB.waited, true);
  assert.equal(order, ["b"], "c still waits");
  turnB.give();
  assert.is(lstatSync(turn).ino, c.ownerFile()!.ino, "then c");
  (await cTakes).give();
  assert.not.ok(existsSync(turn), "nobody queued: the turn is freed");
  assert.equal(queued(), [], "no place left in the queue");
  // A waiter past its bound leaves the queue; the holder's give then frees the turn.
  const keep = (await a.take("exclusive")).give;
  const late = await b.take("exclusive");
  assert.is(late.waited, true);
  assert.equal(queued(), [], "the waiter that gave up left no place");
  keep();
  assert.not.ok(existsSync(turn));
  for (const t of [a, b, c]) t.close();
  assert.equal(readdirSync(dir), []);
});

test("a dead process's place in the queue is swept, and passed over by a holder handing over", async () => {
  const dir = tempDir();
  mkdirSync(dir, { recursive: true });
  const pid = deadPid();
  writeFileSync(`${dir}/${pid}-dead.owner`, JSON.stringify({ pid, host: hostname(), start: null }));
  linkSync(`${dir}/${pid}-dead.owner`, `${dir}/exclusive.queued-000000001-${pid}-x`);
  const t = new WriteTurns(dir);
  const { give } = await t.take("exclusive");
  assert.equal(readdirSync(dir).filter((n) => n.startsWith(`${pid}-`) || n.includes(`-${pid}-`)), [], "swept on first use");
  // One queued after the sweep by a waiter killed meanwhile: the turn is not handed to it, and the place goes.
  writeFileSync(`${dir}/${pid}-dead.owner`, JSON.stringify({ pid, host: hostname(), start: null }));
  linkSync(`${dir}/${pid}-dead.owner`, `${dir}/exclusive.queued-000000002-${pid}-y`);
  rmSync(`${dir}/${pid}-dead.owner`);
  give();
  assert.not.ok(existsSync(`${dir}/exclusive.turn`), "freed, not handed to the dead waiter");
  assert.not.ok(existsSync(`${dir}/exclusive.queued-000000002-${pid}-y`));
  t.close();
});

test("a write nested in another of the same process does not wait for its own turn", async () => {
  const dir = tempDir();
  const t = new WriteTurns(dir);
  const outer = (await t.take("exclusive")).give;
  let innerDone = false;
  const inner = t.take("exclusive").then((turn) => {
    innerDone = true;
    return turn.give;
  });
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  assert.ok(innerDone, "the nested take answered at once");
  (await inner)();
  assert.ok(existsSync(`${dir}/exclusive.turn`), "the outer turn is still held");
  outer();
  t.close();
});

test("a folder that cannot be written: writes go ahead without turns", async () => {
  const dir = tempDir();
  writeFileSync(`${dir}/file`, "");
  const t = new WriteTurns(`${dir}/file/turns`);
  (await t.take("exclusive")).give();
  t.close();
});


// The capacity turn of a long-running process (capacity-turn.ts) is an owned lock linked to this
// process's owner file: no new file a claim (creating one was ~1 ms of a warm MCP claim here).
test("an owned lock linked to the owner file: same inode, its record is ours, given back by inode only", async () => {
  const dir = tempDir();
  const turns = new WriteTurns(`${dir}/turns`);
  const owner = turns.ownerFile()!;
  const lock = `${dir}/capacity-x.lock`;
  const got = await acquireOwnedLock(lock, Date.now() + 1000, undefined, undefined, owner);
  assert.ok(got.ok);
  assert.is(lstatSync(lock).ino, owner.ino, "the lock is a link, not a file of its own");
  assert.equal(readOwner(lock), selfOwner());
  assert.equal(readdirSync(dir).sort(), ["capacity-x.lock", "turns"], "no record file made beside it");
  // Another process of this host holds it (no link to take): waited on, not broken, within the bound.
  const other = await acquireOwnedLock(lock, Date.now() + 50, undefined, undefined, owner);
  assert.is(other.ok, false, "held: a second take waits out its bound");
  if (got.ok) got.release();
  assert.not.ok(existsSync(lock));
  assert.ok(existsSync(owner.path), "the owner file stays for the next lock");
  // Broken and taken by someone else meanwhile: giving back leaves the new holder's lock alone.
  const again = await acquireOwnedLock(lock, Date.now() + 1000, undefined, undefined, owner);
  unlinkSync(lock);
  writeFileSync(lock, JSON.stringify({ pid: process.pid + 1, host: hostname(), start: null }));
  if (again.ok) again.release();
  assert.ok(existsSync(lock), "a lock another holder placed is not removed by our release");
  unlinkSync(lock);
  turns.close();
});

test("an owned lock whose owner file is gone is placed with a record of its own; one linked to a dead process's owner file is broken at once", async () => {
  const dir = tempDir();
  const lock = `${dir}/capacity-y.lock`;
  const got = await acquireOwnedLock(lock, Date.now() + 1000, undefined, undefined, { path: `${dir}/turns/gone.owner`, ino: 1 });
  assert.ok(got.ok);
  assert.equal(readOwner(lock), selfOwner(), "the fallback lock records its owner");
  if (got.ok) got.release();
  assert.not.ok(existsSync(lock), "and is given back");
  // A server killed while it held the lock: the lock is a link to its owner file, naming a dead pid.
  mkdirSync(`${dir}/turns`);
  writeFileSync(`${dir}/turns/dead.owner`, JSON.stringify({ pid: deadPid(), host: hostname(), start: null }));
  linkSync(`${dir}/turns/dead.owner`, lock);
  const started = Date.now();
  const next = await acquireOwnedLock(lock, Date.now() + 5000);
  assert.ok(next.ok, "broken at once");
  assert.ok(Date.now() - started < 1000);
  assert.equal(readOwner(lock), selfOwner());
  if (next.ok) next.release();
});

test.run();
