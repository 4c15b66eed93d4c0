// What the build records as its identity (scripts/build-identity.mjs): the version, and from a git
// checkout of git-handoff itself the commit and whether tracked files differ from it.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { buildIdentity } from "../scripts/build-identity.mjs";
import { buildLabel, buildSemver } from "../src/core/build-identity.ts";
import { cleanupTemp, gitOut, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

test("a git checkout: its commit (12 hex digits); dirty once a tracked file differs, not for an untracked one", () => {
  const repo = tempRepo();
  writeFileSync(join(repo, "a.txt"), "one\n");
  gitOut(repo, "add", "a.txt");
  gitOut(repo, "commit", "-q", "-m", "a");
  const head = gitOut(repo, "rev-parse", "HEAD");
  const clean = buildIdentity(repo, "1.2.3");
  assert.equal(clean, { version: "1.2.3", commit: head.slice(0, 12), dirty: false });
  writeFileSync(join(repo, "scratch.txt"), "not tracked\n");
  assert.is(buildIdentity(repo, "1.2.3").dirty, false, "an untracked file is not a change to the build");
  writeFileSync(join(repo, "a.txt"), "two\n");
  assert.equal(buildIdentity(repo, "1.2.3"), { version: "1.2.3", commit: head.slice(0, 12), dirty: true });
});

test("not a checkout of its own (a tarball unpacked, a folder inside another repository, no commit yet): the version alone", () => {
  const plain = { version: "1.2.3", commit: null, dirty: false };
  assert.equal(buildIdentity(tempDir(), "1.2.3"), plain);
  const outer = tempRepo();
  const inner = join(outer, "node_modules", "git-handoff");
  mkdirSync(inner, { recursive: true });
  assert.equal(buildIdentity(inner, "1.2.3"), plain, "the outer repository's commit is not this build's");
  const unborn = tempDir();
  gitOut(unborn, "init", "-q");
  assert.equal(buildIdentity(unborn, "1.2.3"), plain);
});

test("how a build reads: --version's label and the MCP server's semantic version", () => {
  assert.is(buildLabel({ version: "0.1.0", commit: "3e7ee1a4c2d1", dirty: false }), "0.1.0 (3e7ee1a4c2d1)");
  assert.is(buildLabel({ version: "0.1.0", commit: "3e7ee1a4c2d1", dirty: true }), "0.1.0 (3e7ee1a4c2d1-dirty)");
  assert.is(buildLabel({ version: "0.1.0", commit: null, dirty: false }), "0.1.0");
  assert.is(buildSemver({ version: "0.1.0", commit: "3e7ee1a4c2d1", dirty: true }), "0.1.0+3e7ee1a4c2d1-dirty");
  assert.is(buildSemver({ version: "0.1.0", commit: null, dirty: false }), "0.1.0");
});

test.run();
