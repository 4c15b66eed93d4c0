// Whether a process we recorded (pid and start time, on this host) still runs: a pid reused by
// another process since, or a zombie nobody reaped (an orphan may linger so), does not count.
import { readdirSync, readFileSync } from "node:fs";
import { processStart } from "./owned-lock.ts";

export function processAlive(pid: number | null, start: string | null): boolean {
  if (!pid || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return true; // no /proc here: the signal's answer is all there is
  }
  if (stat[stat.lastIndexOf(")") + 2] === "Z") return false;
  const now = processStart(pid);
  return start === null || now === null || now === start;
}

/**
 * The names in `dir` that carry (as `pidOf` reads them) the id of a process that is gone: what a
 * process killed before its own clean-up left there. None when `dir` cannot be read.
 */
export function namesOfDeadProcesses(dir: string, pidOf: (name: string) => number | null): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((name) => {
    const pid = pidOf(name);
    return pid !== null && !processAlive(pid, null);
  });
}

export { processStart };
