// Whether everything a ref needs is in the object store: its commits, trees and blobs. A
// concurrent `git gc --prune=now` can remove objects a ref was about to point at; such a ref
// then breaks the user's own `git gc`, `git repack` and `git fetch`.
import { git } from "./run.ts";

/** The objects missing below `tip`, or [] when complete. A missing commit counts as missing. */
export async function missingBelow(cwd: string, tip: string): Promise<string[]> {
  const r = await git(["rev-list", "--objects", "--missing=print", tip, "--"], { cwd });
  const missing = r.stdout
    .split("\n")
    .filter((l) => l.startsWith("?"))
    .map((l) => l.slice(1).trim());
  if (r.code !== 0) {
    // git 2.39 stops at a missing commit instead of printing it; name the object it names.
    const named = /([0-9a-f]{40,64})/.exec(r.stderr)?.[1];
    return [...missing, named ?? tip];
  }
  return missing;
}

/** One pass over many tips: true when every one of them is complete (the common case). */
export async function allComplete(cwd: string, tips: string[]): Promise<boolean> {
  if (!tips.length) return true;
  const r = await git(["rev-list", "--objects", "--missing=print", "--stdin"], { cwd, input: [...new Set(tips)].join("\n") + "\n" });
  return r.code === 0 && !/^\?/m.test(r.stdout);
}
