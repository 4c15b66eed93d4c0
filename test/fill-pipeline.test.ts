// The pools of files made ahead are filled by a pipeline (git/fill-pipeline.ts): each finished
// creation starts the next at once, never more than `parallel` under way, none past what is
// wanted; a failure starts no more and is reported once those under way have ended.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { pipeline } from "../src/git/fill-pipeline.ts";

const tick = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

test("up to `parallel` at once, each finished one starting the next, until none is wanted", async () => {
  let made = 0;
  let running = 0;
  let most = 0;
  const starts: number[] = [];
  const t0 = Date.now();
  await pipeline(3, (under) => made + under < 10, async () => {
    running++;
    most = Math.max(most, running);
    starts.push(Date.now() - t0);
    // Uneven durations: a batch would wait for its slowest.
    await tick(starts.length % 3 === 0 ? 40 : 5);
    running--;
    made++;
  });
  assert.is(made, 10);
  assert.is(most, 3);
  assert.is(running, 0);
  // The fourth started when the first quick one ended, not after the slow third.
  assert.ok(starts[3]! < 30, `the fourth started at ${starts[3]} ms`);
});

test("nothing wanted: resolves at once; a failure: no more started, rejected once the others end", async () => {
  let calls = 0;
  await pipeline(4, () => false, async () => void calls++);
  assert.is(calls, 0);
  let started = 0;
  let ended = 0;
  const err = await pipeline(2, () => true, async () => {
    const n = ++started;
    await tick(n === 1 ? 5 : 20);
    ended++;
    if (n === 1) throw new Error("disk full");
  }).then(() => null, (e: Error) => e);
  assert.is(err?.message, "disk full");
  assert.is(started, 2, "the failure started no more");
  assert.is(ended, 2, "rejected only once the one under way had ended");
});

test.run();
