import { stderr } from "./write-out.ts";

/** HANDOFF_HOOK_PROFILE=1 prints, on stderr, when each phase ended (ms since the process started). */
const PROFILE = !!process.env.HANDOFF_HOOK_PROFILE;

if (PROFILE) {
  process.on("exit", () => {
    const r = process.resourceUsage();
    stderr(`git-handoff: profile cpu ${((r.userCPUTime + r.systemCPUTime) / 1000).toFixed(1)} ms\n`);
  });
}

/** Each mark also says the process's CPU time so far: a figure a loaded machine inflates less than the clock's. */
export function mark(phase: string): void {
  if (!PROFILE) return;
  const cpu = process.cpuUsage();
  stderr(`git-handoff: profile ${phase.padEnd(16)} ${performance.now().toFixed(1)} ms (cpu ${((cpu.user + cpu.system) / 1000).toFixed(1)} ms)\n`);
}
