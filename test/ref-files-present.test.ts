// RefFiles opens a ref it last found as a loose file without asking first whether it is there
// (ref-files.ts `present`): the same instance must still follow the ref as git moves it between a
// loose file, packed-refs, and nothing.
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
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

test("a folder's listing passes over links, FIFOs and lock files, and walks its folders (one named .lock too), as a listing by file types did", () => {
  const repo = tempRepo();
  const a = gitOut(repo, "rev-parse", "HEAD").trim();
  const dir = `${repo}/.git/refs/handoff/log`;
  mkdirSync(`${dir}/team`, { recursive: true });
  mkdirSync(`${dir}/x.lock`);
  for (const f of ["alice", "team/frank", "x.lock/gina", "erin.lock"]) writeFileSync(`${dir}/${f}`, `${a}\n`);
  writeFileSync(`${dir}/junk`, "not an object id\n");
  symlinkSync(`${dir}/alice`, `${dir}/bob`); // a link to a ref file
  symlinkSync(`${dir}/team`, `${dir}/hank`); // a link to a folder
  symlinkSync(`${dir}/nowhere`, `${dir}/ivan`); // a dangling link
  const want = ["refs/handoff/log/alice", "refs/handoff/log/team/frank", "refs/handoff/log/x.lock/gina"];
  execFileSync("mkfifo", [`${dir}/dave`]); // no writer: a read that waited would hang here (git's own does)
  const refs = new RefFiles(`${repo}/.git`);
  // Past the reads a process makes the cold way (ref-text.ts COLD_READS) and on the kept buffer.
  for (let i = 0; i < 300; i++) {
    const listed = refs.list("refs/handoff/log/");
    assert.equal(listed.map((t) => t.name), want, `listing ${i}`);
    assert.ok(listed.every((t) => t.oid === a));
  }
});

test.run();
