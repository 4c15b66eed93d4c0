// Bounded waiting for the blocking tools. A call blocks at most `boundMs` (about 50 s, under the
// 60 s request timeout most MCP clients use), then returns what it saw so the agent calls again.
import type { ToolContext } from "./tool.ts";

export interface Waited<T> {
  value: T | null;
  waitedMs: number;
  timedOut: boolean;
}

/** Longest the caller asked for, capped by the server's bound. */
export function boundFor(ctx: ToolContext, seconds: number | undefined): number {
  const bound = ctx.session.waitBoundMs;
  return seconds === undefined ? bound : Math.min(bound, Math.max(0, seconds * 1000));
}

/** Aborted when the client cancels the call or the server is stopping: a blocking call ends its wait. */
export function waitSignal(ctx: ToolContext): AbortSignal {
  return AbortSignal.any([ctx.signal, ctx.session.stopping]);
}

/**
 * Calls `check` every poll interval until it returns a value, the bound passes, the client
 * cancels or the server stops. `check` runs at least once, so a zero bound is a plain read.
 */
export async function pollUntil<T>(ctx: ToolContext, boundMs: number, check: () => Promise<T | null>, pollMs = ctx.session.pollMs): Promise<Waited<T>> {
  const start = Date.now();
  let lastProgress = start;
  const progressEvery = Math.min(5000, boundMs / 5); // a few signs of life per call, for clients that reset their timeout on progress
  const signal = waitSignal(ctx);
  for (;;) {
    const value = await check();
    const waitedMs = Date.now() - start;
    if (value !== null) return { value, waitedMs, timedOut: false };
    if (waitedMs >= boundMs || signal.aborted) return { value: null, waitedMs, timedOut: true };
    if (Date.now() - lastProgress >= progressEvery) {
      lastProgress = Date.now();
      await ctx.progress(waitedMs, boundMs, "still waiting");
    }
    await sleep(Math.min(pollMs, boundMs - waitedMs), signal);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
