// Whether a process with this pid exists (signal 0): for tests that check what a command left running.
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
