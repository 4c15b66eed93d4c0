// Whether everything a ref needs is in the object store: its commits, trees and blobs. A
// concurrent `git gc --prune=now` can remove objects a ref was about to point at; such a ref
// then breaks the user's own `git gc`, `git repack` and `git fetch`.
import { git } from "./run.ts";

/**
 * What is wrong below `tip`: the objects missing (a missing commit counts as missing), or, for an
 * object that is there but git cannot read (a tree that is not well formed, a damaged file: only a
 * hand-made or damaged object is), git's words for it. Null when everything is there and readable.
 */
export async function damageBelow(cwd: string, tip: string): Promise<{ missing: string[]; unreadable: string | null } | null> {
  const r = await git(["rev-list", "--objects", await missingMode(cwd), tip, "--"], { cwd });
  const missing = r.stdout
    .split("\n")
    .filter((l) => l.startsWith("?"))
    .map((l) => l.slice(1).trim());
  if (r.code === 0) return missing.length ? { missing, unreadable: null } : null;
  const said = /^fatal: (.*)$/m.exec(r.stderr)?.[1]?.trim() ?? r.stderr.trim().split("\n")[0] ?? "";
  // git 2.39 stops at a missing commit ("bad object <id>") instead of printing it; name the
  // object it names. Any other failure is an object git has but cannot read.
  if (MISSING.test(said) || !said) return { missing: [...missing, /([0-9a-f]{40,64})/.exec(said)?.[1] ?? tip], unreadable: null };
  return { missing, unreadable: said.slice(0, 200) };
}

/**
 * In a partial clone (a promisor remote: extensions.partialClone, remote.<name>.promisor) an
 * object the remote can send is not missing: `git fsck` and git's own commands fetch it when
 * needed. There git is told to allow those and to stop at any other missing object (which
 * damageBelow then names from git's words); elsewhere every missing object is listed.
 */
async function missingMode(cwd: string): Promise<string> {
  const r = await git(["config", "--get-regexp", "^(extensions\\.partialclone|remote\\..*\\.promisor)$"], { cwd });
  const promisor = r.stdout.split("\n").some((l) => /^extensions\.partialclone \S/i.test(l) || /^remote\..*\.promisor (true|yes|on|1)$/i.test(l.trim()));
  return promisor ? "--missing=allow-promisor" : "--missing=print";
}

/** git's words for an object that is not there. */
const MISSING = /\b(bad object|missing|unable to read|could not read|not a valid object)\b/i;

/** One pass over many tips: true when every one of them is complete (the common case). */
export async function allComplete(cwd: string, tips: string[]): Promise<boolean> {
  if (!tips.length) return true;
  const r = await git(["rev-list", "--objects", await missingMode(cwd), "--stdin"], { cwd, input: [...new Set(tips)].join("\n") + "\n" });
  return r.code === 0 && !/^\?/m.test(r.stdout);
}
