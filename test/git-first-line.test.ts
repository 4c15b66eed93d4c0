// git's stderr as one line in our messages: the first line, or the first two when the first only
// introduces the second (a refused git:// connection said "unable to connect to 127.0.0.1:" and no more).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { firstLine } from "../src/git/run.ts";

test("a first line that ends in a colon takes the next with it", () => {
  assert.is(firstLine("fatal: unable to connect to 127.0.0.1:\n127.0.0.1[0: 127.0.0.1]: errno=Connection refused\n\n"), "unable to connect to 127.0.0.1: 127.0.0.1[0: 127.0.0.1]: errno=Connection refused");
  assert.is(firstLine("\nerror: failed to push some refs to 'x'\nhint: Updates were rejected\n"), "failed to push some refs to 'x'");
  assert.is(firstLine("fatal: the remote end hung up unexpectedly:"), "the remote end hung up unexpectedly:");
  assert.is(firstLine(""), "");
});

test.run();
