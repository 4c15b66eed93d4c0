import { existsSync, readFileSync } from "node:fs";
import { readRef } from "./refs.ts";

/**
 * Reads one ref's value from the files git keeps (loose ref, then packed-refs) without spawning
 * git: the implicit heartbeat runs after every command and must stay cheap. Reftable repositories
 * fall back to `git for-each-ref`. Read-only; writes always go through `updateRefs`.
 */
export async function readRefFast(commonDir: string, cwd: string, name: string): Promise<string | null> {
  if (existsSync(`${commonDir}/reftable`)) return readRef(cwd, name);
  try {
    const text = readFileSync(`${commonDir}/${name}`, "utf8").trim();
    if (/^[0-9a-f]{40,64}$/.test(text)) return text;
    return readRef(cwd, name); // a symbolic or odd ref: let git answer
  } catch {
    /* not loose: look in packed-refs */
  }
  let packed: string;
  try {
    packed = readFileSync(`${commonDir}/packed-refs`, "utf8");
  } catch {
    return null;
  }
  for (const line of packed.split("\n")) {
    if (line.endsWith(` ${name}`) && /^[0-9a-f]{40,64} /.test(line)) return line.slice(0, line.indexOf(" "));
  }
  return null;
}

/** The commit HEAD of a worktree points at, read from files (null on an unborn branch). */
export async function readHeadFast(gitDir: string, commonDir: string, cwd: string): Promise<string | null> {
  let head: string;
  try {
    head = readFileSync(`${gitDir}/HEAD`, "utf8").trim();
  } catch {
    return null;
  }
  if (/^[0-9a-f]{40,64}$/.test(head)) return head;
  const m = /^ref: (refs\/.+)$/.exec(head);
  return m ? readRefFast(commonDir, cwd, m[1]!) : null;
}
