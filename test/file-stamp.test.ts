// A file's stamp (src/git/file-stamp.ts) is what says a cached read of it still stands: two
// states of a file that a cache must tell apart must not share one.
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fileStamp, stampOfStats } from "../src/git/file-stamp.ts";
import { cleanupTemp, tempDir } from "./support/repo.ts";

test.after(cleanupTemp);

test("a stamp names the file's inode exactly, even past 2^53 where a number stat's inode is rounded", () => {
  // Neighbouring inodes of Lustre or an NFS server read alike as numbers.
  assert.is(Number(2n ** 60n + 1n), Number(2n ** 60n + 2n));
  const path = join(tempDir(), "config");
  writeFileSync(path, "[core]\n");
  const st = statSync(path);
  assert.is(stampOfStats(st, path), fileStamp(path));
  assert.ok(stampOfStats(st, path).startsWith(`${st.ino}:${st.size}:`));
  // A stat whose inode is no exact number: the stamp is taken from a bigint stat of the file.
  const big = statSync(path, { bigint: true });
  const rounded = Object.assign(Object.create(Object.getPrototypeOf(st)), st, { ino: 2 ** 60 });
  assert.is(stampOfStats(rounded, path), `${big.ino}:${big.size}:${big.mtimeNs}:${big.ctimeNs}`);
});

test.run();
