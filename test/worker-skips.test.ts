// What a worker leaves alone after giving a task back (src/work/worker-skips.ts): a task it could
// not set up, for good; one given back after a failure that may pass (a recoverable code: the
// remote timed out, could not be reached), for a minute, then it is taken again. The worker's own
// path through a task it cannot set up is test/worker-unworkable.test.ts.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { REST_AFTER_PASSING_FAILURE_MS, WorkerSkips } from "../src/work/worker-skips.ts";

test("a failure that may pass rests the task for a while; any other, for good; tasks not given back are taken", () => {
  let now = 1_000_000;
  const skips = new WorkerSkips(() => now);
  assert.is(skips.gaveBack("flaky", "remote_timeout"), "rests");
  assert.is(skips.gaveBack("gone", "remote_unreachable"), "rests");
  assert.is(skips.gaveBack("broken", "environment"), "never");
  assert.is(skips.gaveBack("odd", undefined), "never", "an unexpected error (not one of ours) is not taken for passing");
  assert.ok(skips.has("flaky") && skips.has("gone") && skips.has("broken") && skips.has("odd"));
  assert.not.ok(skips.has("other"));
  now += REST_AFTER_PASSING_FAILURE_MS - 1;
  assert.ok(skips.has("flaky"), "still resting just before the minute is up");
  now += 1;
  assert.not.ok(skips.has("flaky"), "taken again once it is");
  assert.not.ok(skips.has("gone"));
  assert.ok(skips.has("broken") && skips.has("odd"), "the others never");
  // Given back again later: rests again.
  assert.is(skips.gaveBack("flaky", "outcome_unknown"), "rests");
  assert.ok(skips.has("flaky"));
});

test.run();
