/** HANDOFF_HOOK_PROFILE=1 prints, on stderr, when each phase ended (ms since the process started). */
const PROFILE = !!process.env.HANDOFF_HOOK_PROFILE;

export function mark(phase: string): void {
  if (PROFILE) process.stderr.write(`git-handoff: profile ${phase.padEnd(16)} ${performance.now().toFixed(1)} ms\n`);
}
