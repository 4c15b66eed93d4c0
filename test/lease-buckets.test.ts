// How format 3 files a folder's leases (store/lease-tree.ts): a power of two of files of about
// FILE_LEASES leases each, kept while it fits so that leases coming and going around a boundary
// do not rewrite every file; each lease in the file its pattern's hash names; names that no
// folder can spell like a bucket.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Lease } from "../src/core/lease.ts";
import { bucketFile, bucketOf, bucketsFor, fileLeases, FILE_LEASES, MAX_BUCKETS } from "../src/store/lease-tree.ts";

const lease = (pattern: string): Lease => ({ pattern, agent: "a", task: null, exclusive: false, acquired_at: "2026-01-01T00:00:00.000Z", expires_at: "2026-01-01T01:00:00.000Z", ttl_ms: 3_600_000, reason: null, worktree: null, branch: null, scope: "primary" });

test("bucketsFor: about FILE_LEASES a file, a power of two, bounded; kept while between a quarter and twice full", () => {
  assert.is(bucketsFor(0, undefined), 1);
  assert.is(bucketsFor(FILE_LEASES, undefined), 1);
  assert.is(bucketsFor(FILE_LEASES + 1, undefined), 2);
  assert.is(bucketsFor(1000, undefined), 32);
  assert.is(bucketsFor(10_000_000, undefined), MAX_BUCKETS);
  for (let n = 1; n < 5000; n += 7) {
    const b = bucketsFor(n, undefined);
    assert.ok((b & (b - 1)) === 0 && b * FILE_LEASES >= Math.min(n, MAX_BUCKETS * FILE_LEASES), `${n} -> ${b}`);
  }
  // No flapping: around a boundary the count stays until the files are twice full or a quarter.
  assert.is(bucketsFor(FILE_LEASES + 1, 1), 1, "one file holds up to twice FILE_LEASES before it splits");
  assert.is(bucketsFor(2 * FILE_LEASES + 1, 1), 4);
  assert.is(bucketsFor(300, 32), 32, "32 files kept for 300 leases (a quarter full is 256)");
  assert.is(bucketsFor(200, 32), 8, "below a quarter: fewer files");
  assert.is(bucketsFor(3, 1), 1);
});

test("bucketFile: a folder's name escaped so that `~` only separates the count and the bucket", () => {
  assert.is(bucketFile("src", 1, 0), "src.json");
  assert.is(bucketFile("src", 8, 3), "src~8~3.json");
  assert.is(bucketFile("a~8~3", 1, 0), "a%7E8%7E3.json", "a folder named like a bucket is not one");
  assert.is(bucketFile(".hidden", 1, 0), "%2Ehidden.json");
  assert.is(bucketFile("*", 2, 1), "*~2~1.json");
});

test("fileLeases: every lease once, in its pattern's bucket, in the set's order; the counts of before are kept while they fit", () => {
  const leases = Array.from({ length: 300 }, (_, i) => lease(`src/m${String(i).padStart(3, "0")}/f.ts`)).concat([lease("docs/a.md"), lease("x.ts")]);
  const files = fileLeases(leases, null);
  const names = [...files.keys()];
  assert.ok(names.includes("docs.json") && names.includes("*.json"), names.join(" "));
  const src = names.filter((n) => n.startsWith("src~"));
  assert.ok(src.length > 1 && src.every((n) => n.startsWith(`src~${bucketsFor(300, undefined)}~`)), src.join(" "));
  const all = [...files.values()].flat();
  assert.is(all.length, leases.length);
  assert.is(new Set(all).size, leases.length);
  for (const [name, list] of files) {
    const m = /^src~(\d+)~(\d+)\.json$/.exec(name);
    if (m) for (const l of list) assert.is(bucketOf(l.pattern, Number(m[1])), Number(m[2]));
    const order = list.map((l) => leases.indexOf(l));
    assert.equal(order, [...order].sort((a, b) => a - b), `${name}: in the set's order`);
  }
  // With the counts it had (16 files for 300 fits), the same files: a write keeps them.
  const kept = fileLeases(leases, new Map([["src", 16]]));
  assert.ok([...kept.keys()].filter((n) => n.startsWith("src~")).every((n) => n.startsWith("src~16~")));
  // Forced (reading a stored record back), the stored count whatever the size.
  assert.ok([...fileLeases(leases, new Map([["src", 2]]), true).keys()].filter((n) => n.startsWith("src~")).every((n) => n.startsWith("src~2~")));
});

test.run();
