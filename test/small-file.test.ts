// Cache files under .git/handoff/ (store/small-file.ts): replaced whole, the old file removed
// before the new one is renamed into place, nothing left behind, and a failure is only a miss.
import { mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readSmallFile, writeSmallFile } from "../src/store/small-file.ts";
import { cleanupTemp, tempDir } from "./support/repo.ts";

test.after(cleanupTemp);

test("a cache is written, replaced by a new file with the new text, and no temp is left", () => {
  const dir = join(tempDir(), "handoff");
  const path = join(dir, "some.cache");
  assert.is(readSmallFile(path), null);
  writeSmallFile(path, "first\n");
  assert.is(readSmallFile(path), "first\n");
  const before = statSync(path).ino;
  writeSmallFile(path, "second, longer\n");
  assert.is(readSmallFile(path), "second, longer\n");
  assert.is.not(statSync(path).ino, before, "a new file, never the old one written over");
  assert.equal(readdirSync(dir), ["some.cache"]);
});

test("a cache that cannot be written is no error", () => {
  // A file where the cache's folder should be: no write succeeds there, for root either.
  const base = tempDir();
  writeFileSync(join(base, "handoff"), "not a folder");
  writeSmallFile(join(base, "handoff", "x.cache"), "text");
  assert.is(readSmallFile(join(base, "handoff", "x.cache")), null);
  // A folder where the cache should be: the rename fails, and its temp does not stay behind.
  const dir = join(tempDir(), "handoff");
  mkdirSync(join(dir, "y.cache"), { recursive: true });
  writeSmallFile(join(dir, "y.cache"), "text");
  assert.equal(readdirSync(dir), ["y.cache"]);
});

test.run();
