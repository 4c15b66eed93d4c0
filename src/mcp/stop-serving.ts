// How the MCP server stops when asked (SIGTERM or SIGINT from its host, or the host closing stdin,
// the first step of the protocol's stdio shutdown, or closing our stdout): it reads no more
// requests, answers those in progress (a claim whose push is on the wire gets its answer, and the
// claim is not left half recorded; an answer to a closed stdout is dropped), pushes the writes
// queued for the push budget, all within STOP_BOUND_MS, then exits.
// Blocking calls (wait_task, watch) answer at once with what they saw (session.stopping).
import type { LineTransport } from "./line-transport.ts";
import type { McpSession } from "./session.ts";

/** What finishing may take before the server exits anyway: hosts send SIGKILL a few seconds after SIGTERM. */
export const STOP_BOUND_MS = 3000;

/** Resolves true when `p` settles before `until` (Date.now()), false when the time runs out first. */
function within(p: Promise<unknown>, until: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, until - Date.now()))));
  return Promise.race([p.then(() => true, () => true), late]).finally(() => clearTimeout(timer));
}

/** Finishes what is under way, within `boundMs`; says on stderr (`log`) what it could not. */
export async function finishServing(transport: LineTransport, session: McpSession, log: (line: string) => void, boundMs = STOP_BOUND_MS): Promise<void> {
  const until = Date.now() + boundMs;
  transport.stopReading();
  session.stop();
  if (!(await within(transport.allAnswered(), until))) {
    log(`${transport.awaitingAnswer} call(s) still running after ${boundMs / 1000} s: stopped without their answers`);
  }
  let failed: unknown = null;
  const flushed = await within(session.flushQueued().catch((e: unknown) => (failed = e)), until);
  // Not lost: the local refs keep the writes and the queue their names; the clone's next push takes them.
  if (!flushed || failed) log(`queued writes not pushed (${failed ? (failed as Error).message : "out of time"}): the next push of this clone sends them`);
}
