// RefFiles opens a ref it last found as a loose file without asking first whether it is there
// (ref-files.ts `present`): the same instance must still follow the ref as git moves it between a
// loose file, packed-refs, and nothing.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { RefFiles } from "../src/git/ref-files.ts";
import { cleanupTemp, gitOut, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

test("a ref read as a loose file, then packed, moved, deleted and made again: every read says what git says", () => {
  const repo = tempRepo();
  gitOut(repo, "commit", "-q", "--allow-empty", "-m", "a");
  const a = gitOut(repo, "rev-parse", "HEAD").trim();
  gitOut(repo, "commit", "-q", "--allow-empty", "-m", "b");
  const b = gitOut(repo, "rev-parse", "HEAD").trim();
  const refs = new RefFiles(`${repo}/.git`);
  const ref = "refs/handoff/tasks/t-1";
  const gitSays = () => gitOut(repo, "for-each-ref", "--format=%(objectname)", ref).trim() || null;
  assert.is(refs.read(ref), null);
  gitOut(repo, "update-ref", ref, a);
  assert.is(refs.read(ref), a, "loose");
  gitOut(repo, "pack-refs", "--all", "--prune");
  assert.is(refs.read(ref), a, "packed only: the loose file it knew is gone");
  assert.is(refs.read(ref), gitSays());
  gitOut(repo, "update-ref", ref, b);
  assert.is(refs.read(ref), b, "loose over packed");
  gitOut(repo, "update-ref", "-d", ref);
  assert.is(refs.read(ref), null, "deleted: neither loose nor packed");
  assert.is(gitSays(), null);
  gitOut(repo, "update-ref", ref, a);
  assert.is(refs.read(ref), a, "made again");
});

test.run();
