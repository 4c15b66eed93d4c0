// Often-absent files read without a thrown ENOENT (git/optional-file.ts): absent is null, a file
// where a folder should be is absent too, anything else a read would refuse still throws.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readIfThere } from "../src/git/optional-file.ts";
import { cleanupTemp, tempDir } from "./support/repo.ts";

test.after(cleanupTemp);

test("a file's text, null for a missing one or one under a file, and a folder still refused", () => {
  const dir = tempDir();
  writeFileSync(join(dir, "there"), "text\n");
  mkdirSync(join(dir, "folder"));
  assert.is(readIfThere(join(dir, "there")), "text\n");
  assert.is(readIfThere(join(dir, "missing")), null);
  assert.is(readIfThere(join(dir, "there", "under-a-file")), null);
  assert.throws(() => readIfThere(join(dir, "folder")), (e: NodeJS.ErrnoException) => e.code === "EISDIR");
});

test.run();
