// Numbers in messages are grouped by groupDigits, not toLocaleString (ICU) nor a look-ahead
// pattern (compiled at its first use, as the bundle loads): it must give what "en" gives.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { groupDigits } from "../src/core/digits.ts";

test("groupDigits groups as toLocaleString(\"en\") does, negatives and every length included", () => {
  const samples = [0, 1, 12, 123, 1234, 12345, 123456, 1234567, 999, 1000, 100000, 1000000, 250_000, 2 ** 31, 2 ** 53 - 1];
  for (let i = 0; i < 500; i++) samples.push(Math.floor(Math.random() * 10 ** (1 + (i % 15))));
  for (const n of samples) for (const v of n ? [n, -n] : [n]) assert.is(groupDigits(v), v.toLocaleString("en", { maximumFractionDigits: 0 }), String(v));
});

test("groupDigits drops a fraction as Math.trunc does, and leaves an exponent form as String gives it", () => {
  assert.is(groupDigits(1234.9), "1,234");
  assert.is(groupDigits(-1234.9), "-1,234");
  assert.is(groupDigits(1e21), "1e+21");
});

test.run();
