import { stderr } from "./write-out.ts";

/** HANDOFF_HOOK_PROFILE=1 prints, on stderr, when each phase ended (ms since the process started). */
const PROFILE = !!process.env.HANDOFF_HOOK_PROFILE;

/**
 * Each mark's phase, its time and the CPU time so far, printed at exit: a line written as each
 * phase ended (made, escaped, a write(2)) cost the span it measured ~15 us a mark, six of them
 * between the payload read and the answer, and a hook run without the switch writes none.
 */
const marks: (string | number)[] = [];

if (PROFILE) {
  process.on("exit", () => {
    let text = "";
    for (let i = 0; i < marks.length; i += 3) {
      text += `git-handoff: profile ${(marks[i] as string).padEnd(16)} ${(marks[i + 1] as number).toFixed(1)} ms (cpu ${(marks[i + 2] as number).toFixed(1)} ms)\n`;
    }
    const r = process.resourceUsage();
    stderr(`${text}git-handoff: profile cpu ${((r.userCPUTime + r.systemCPUTime) / 1000).toFixed(1)} ms\n`);
  });
}

/** Each mark also says the process's CPU time so far: a figure a loaded machine inflates less than the clock. */
export function mark(phase: string): void {
  if (!PROFILE) return;
  const cpu = process.cpuUsage();
  marks.push(phase, performance.now(), (cpu.user + cpu.system) / 1000);
}
