import { readFileSync } from "node:fs";

/**
 * The commit HEAD of a worktree points at, read from its HEAD file (no git spawn: it is read on
 * every claim, to record the task's base). `readRef` resolves the branch; null on an unborn branch.
 */
export async function readHead(gitDir: string, readRef: (name: string) => Promise<string | null>): Promise<string | null> {
  let head: string;
  try {
    head = readFileSync(`${gitDir}/HEAD`, "utf8").trim();
  } catch {
    return null;
  }
  if (/^[0-9a-f]{40,64}$/.test(head)) return head;
  const m = /^ref: (refs\/.+)$/.exec(head);
  return m ? readRef(m[1]!) : null;
}
