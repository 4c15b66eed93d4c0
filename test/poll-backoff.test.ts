// Poll intervals of a follower: growing by half from 250 ms to 2 s while nothing changes, back to
// the start on a change, and (for a waiter that just pushed its task) held at the quickest for a
// while after the push and after each change. A scripted clock drives it.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Backoff } from "../src/sync/follow-ref.ts";

test("without a steady window the intervals grow by half up to the cap, and a change starts over", () => {
  const b = new Backoff();
  assert.equal([b.take(), b.take(), b.take(), b.take(), b.take(), b.take(), b.take()], [250, 375, 563, 845, 1268, 1902, 2000]);
  b.reset();
  assert.is(b.take(), 250);
});

test("a steady window holds the quickest interval, from the start and after each change, then growth resumes", () => {
  let now = 1000;
  const b = new Backoff(250, 2000, 2000, true, () => now);
  for (let i = 0; i < 8; i++) {
    assert.is(b.take(), 250);
    now += 250;
  }
  // 2 s since the start: growth as usual.
  assert.equal([b.take(), b.take(), b.take()], [250, 375, 563]);
  now += 1188;
  b.reset(); // a change: steady again for 2 s
  assert.equal([b.take(), b.take()], [250, 250]);
  now += 1999;
  assert.is(b.take(), 250);
  now += 1;
  assert.equal([b.take(), b.take()], [250, 375]);
});

test("a waiter that did not push the task grows from the start", () => {
  const now = 0;
  const b = new Backoff(250, 2000, 2000, false, () => now);
  assert.equal([b.take(), b.take()], [250, 375]);
});

test.run();
