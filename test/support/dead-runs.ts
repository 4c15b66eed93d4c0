// Folders a test run names after its process (`<prefix><pid>-...`), left behind when the run was
// killed before its own clean-up: the next run removes those whose process is gone.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { namesOfDeadProcesses } from "../../src/git/process-alive.ts";

/** Removes the entries of `dir` named by `pid` (its first group: the run's process id) whose process is gone. */
export function removeDeadRuns(dir: string, pid: RegExp): void {
  const pidOf = (name: string) => {
    const p = pid.exec(name)?.[1];
    return p ? Number(p) : null;
  };
  for (const name of namesOfDeadProcesses(dir, pidOf)) rmSync(join(dir, name), { recursive: true, force: true });
}
