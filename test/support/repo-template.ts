// A repository a file's tests each start from, built once per test process and copied for each
// (as views-fixture.ts does for its large fixtures): copying a small repository costs a few
// milliseconds in-process, where building it again costs a dozen CLI starts. Each call gets its
// own copy, so a test may change it freely. A copy keeps the absolute paths its .git names: only
// for a repository with no linked worktree and no remote by path, and for tests that do not look at
// the worktree a claim or lease records (the template's, in a copy).
import { cpSync, existsSync } from "node:fs";
import { tempDir } from "./repo.ts";

function copy(template: string): string {
  const repo = tempDir();
  cpSync(template, repo, { recursive: true, preserveTimestamps: true });
  return repo;
}

/** A function giving a fresh copy of what `build` made (built at the first call). */
export function fromTemplate(build: () => string): () => string {
  let template: string | undefined;
  return () => {
    // Files sharing a process each clean up their temp folders after their tests: one made for an
    // earlier file may be gone.
    if (template === undefined || !existsSync(template)) template = build();
    return copy(template);
  };
}

/** fromTemplate for a `build` that seeds in-process (test/support/seed.ts). */
export function fromTemplateAsync(build: () => Promise<string>): () => Promise<string> {
  let template: string | undefined;
  return async () => {
    if (template === undefined || !existsSync(template)) template = await build();
    return copy(template);
  };
}
