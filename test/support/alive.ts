// Whether a process with this pid exists (signal 0): for tests that check what a command left running.
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Kills what is left of these process groups (a test's after-hook: a failed test may leave one running). */
export function killGroups(groups: number[]): void {
  for (const g of groups) {
    try {
      process.kill(-g, "SIGKILL");
    } catch {
      /* gone */
    }
  }
}
