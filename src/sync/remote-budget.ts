// Time bounds for talking to the sync remote. Each git call gets the per-clone deadline
// (`git config handoff.remoteTimeout`, env HANDOFF_REMOTE_TIMEOUT_MS), and one operation, retries
// included, gets a budget that ends before the ~60 s after which MCP clients give up on a tool.
import { fail } from "../core/errors.ts";
import { formatDuration, parseDuration } from "../core/duration.ts";
import { configGet } from "../git/config.ts";
import { seenSetting } from "../git/configured-remote.ts";
import type { RemoteFailure } from "../git/remote-failure.ts";
import type { Store } from "../store/store.ts";

export const DEFAULT_REMOTE_TIMEOUT_MS = 20_000;
/** One operation's remote calls (refreshes, pushes, retries), before the check of an unknown push. */
export const OPERATION_BUDGET_MS = 40_000;
/** The read that settles a push whose report never came, after the budget if need be. */
export const VERIFY_MAX_MS = 10_000;

export interface RemoteBudget {
  remote: string;
  /** The per-call deadline in effect. */
  timeoutMs: number;
  /** When the whole operation must be over (epoch ms). */
  until: number;
  /** `until` bounds the read that settles a lost push's report too (SharedDeadline.firm). */
  firm?: boolean;
}

const configured = new WeakMap<Store, Promise<number>>();

/** The per-call deadline for this clone, read once per store. */
export function remoteTimeoutMs(store: Store): Promise<number> {
  let p = configured.get(store);
  if (!p) {
    p = (async () => {
      const env = process.env.HANDOFF_REMOTE_TIMEOUT_MS;
      if (env !== undefined && env !== "") {
        const n = Number(env);
        if (!Number.isFinite(n) || n <= 0) fail("invalid_input", `HANDOFF_REMOTE_TIMEOUT_MS must be a positive number of milliseconds, got ${JSON.stringify(env)}`);
        return n;
      }
      // Read along with the sync remote's name when that was read (no second git call).
      const seen = seenSetting(store.cwd, "handoff.remotetimeout");
      const text = seen !== undefined ? seen : await configGet(store.cwd, "handoff.remoteTimeout");
      return text === null ? DEFAULT_REMOTE_TIMEOUT_MS : parseDuration(text, "git config handoff.remoteTimeout");
    })();
    configured.set(store, p);
  }
  return p;
}

export async function remoteBudget(store: Store, remote: string, totalMs = OPERATION_BUDGET_MS): Promise<RemoteBudget> {
  const timeoutMs = await remoteTimeoutMs(store);
  return { remote, timeoutMs, until: Date.now() + totalMs };
}

/** How long the next call may take; past the budget, the operation ends as a timeout. */
export function callTimeout(b: RemoteBudget): number {
  const left = b.until - Date.now();
  if (left <= 0) timedOut(b, "the operation's time budget is spent");
  return Math.min(b.timeoutMs, left);
}

export function timedOut(b: RemoteBudget, detail: string): never {
  const ms = Math.min(b.timeoutMs, OPERATION_BUDGET_MS);
  const deadline = ms < 10_000 ? `${Math.round(ms / 100) / 10}s` : formatDuration(ms);
  fail(
    "remote_timeout",
    `the sync remote ${b.remote} did not answer within ${deadline} (${detail}); nothing was changed here`,
    { remote: b.remote, timeout_ms: b.timeoutMs, budget_ms: OPERATION_BUDGET_MS },
    [
      { action: "retry", detail: "run the command again once the remote answers; raise the bound with git config handoff.remoteTimeout 45s" },
      { action: "work_elsewhere", detail: "or work offline: add --offline (the grant is tentative until the next git handoff sync)" },
    ],
  );
}

/**
 * What the failed call was for: an exclusive write (a claim, an exclusive lease), a write sent at
 * once only because --push asked it (kept nowhere, since a refusal changes no ref), or a sync.
 */
export type RemoteUse = "exclusive" | "push" | "sync";

export function unreachable(remote: string, message: string, kind: RemoteUse = "exclusive"): never {
  // Reached, but made for other object ids: no retry, network or --offline changes that.
  if (/hash algorithm|object-format=sha256|object format/i.test(message)) {
    fail("remote_rejected", `the sync remote ${remote} uses another object format (hash algorithm) than this repository: they cannot share state (${message})`, { remote }, [
      { action: "fix_input", detail: `share state through a remote of this repository's object format (git rev-parse --show-object-format): git handoff remote <name>` },
    ]);
  }
  const why =
    kind === "exclusive" ? ": exclusive operations need it (or use --offline for a tentative grant)" : kind === "push" ? ": nothing was written (without --push the write is kept here and sent by the next sync)" : "";
  fail("remote_unreachable", `the sync remote ${remote} cannot be reached (${message})${why}`, { remote }, [
    { action: "retry", detail: "check the network or credentials, then run the command again" },
    ...(kind === "exclusive" ? [{ action: "work_elsewhere" as const, detail: "or work offline: add --offline (the grant is tentative until the next git handoff sync)" }] : []),
    ...(kind === "push" ? [{ action: "work_elsewhere" as const, detail: "or run it without --push: written here, it goes with the next git handoff sync" }] : []),
  ]);
}

/** A failed remote call as the right refusal: a timeout or an unreachable remote. */
export function remoteFailed(b: RemoteBudget, f: RemoteFailure, use: RemoteUse = "exclusive"): never {
  if (f.timedOut) timedOut(b, f.message);
  unreachable(b.remote, f.message, use);
}
