// The version of the git this process runs (`git --version`), for `git handoff version --json`.
import { git } from "./run.ts";

/** `2.39.5` from `git version 2.39.5`; null when git cannot be run or says something else. */
export async function gitVersion(cwd: string): Promise<string | null> {
  try {
    const r = await git(["--version"], { cwd, timeoutMs: 10_000 });
    return r.code === 0 ? (/^git version (\S+)/.exec(r.stdout)?.[1] ?? null) : null;
  } catch {
    return null;
  }
}
