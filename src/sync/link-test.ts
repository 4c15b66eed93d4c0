// `git handoff test`: does this clone reach its sync remote, both ways, and who is out there?
// Fetches refs/handoff/*, pushes a probe ref (in the inputs family, so every receiving clone
// validates it as it would a task's inputs), reads it back, removes it; lists the agents whose
// heartbeat is recent; with a round-trip address, hands a probe task to a worker there and times
// the whole wait. Each check is one line: ✓, or ✗ with what to do about it.
import { randomBytes } from "node:crypto";
import { classifyAgent } from "../core/agent.ts";
import type { Address } from "../core/address.ts";
import { lsRemoteRefs } from "../git/remote-ref.ts";
import { pushWithLease } from "../git/push-lease.ts";
import { listAgents } from "../store/agent-store.ts";
import { localMachine } from "../store/machine.ts";
import type { Store } from "../store/store.ts";
import { cancel } from "../store/task-actions.ts";
import { INPUTS_FILE, inputsRef, writeBundle } from "../work/bundle.ts";
import { createHandover } from "../work/handover.ts";
import { waitForFinal } from "../work/wait-final.ts";
import { refresh } from "./remote-cas.ts";
import { callTimeout, remoteBudget } from "./remote-budget.ts";

export interface LinkCheck {
  name: "remote" | "fetch" | "push" | "read back" | "remove" | "round trip";
  ok: boolean;
  detail: string;
  /** What to do when it failed. */
  fix: string | null;
  ms: number | null;
}

export interface SeenAgent {
  agent: string;
  machine: string | null;
  status: string;
  heartbeat_at: string;
  age_ms: number;
}

export interface LinkReport {
  remote: string | null;
  machine: string;
  ok: boolean;
  checks: LinkCheck[];
  agents: SeenAgent[];
}

/** Agents whose heartbeat is at most this old are listed. */
const RECENT_MS = 24 * 3600_000;
const MAX_LISTED = 20;

export async function testLink(store: Store, opts: { roundTrip?: Address | null; roundTripText?: string; timeoutMs: number; signal: AbortSignal }): Promise<LinkReport> {
  const machine = await localMachine(store);
  const checks: LinkCheck[] = [];
  const remote = await store.syncRemote();
  const report = (): LinkReport => ({ remote, machine, ok: checks.every((c) => c.ok), checks, agents: [] });
  if (!remote) {
    checks.push({ name: "remote", ok: false, detail: "this clone has no sync remote (no origin, handoff.remote not set)", fix: "git remote add origin URL, or git handoff remote NAME", ms: null });
    return withAgents(store, report());
  }
  checks.push({ name: "remote", ok: true, detail: `sync remote ${remote}`, fix: null, ms: null });
  const timed = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
    const t0 = Date.now();
    const v = await fn();
    return [v, Date.now() - t0];
  };

  const [fetched, fetchMs] = await timed(() => refresh(store, remote));
  checks.push(
    fetched.ok
      ? { name: "fetch", ok: true, detail: `fetched refs/handoff/* from ${remote}`, fix: null, ms: fetchMs }
      : { name: "fetch", ok: false, detail: `cannot fetch from ${remote}: ${fetched.message}`, fix: `check the URL and your credentials: git ls-remote ${remote}`, ms: fetchMs },
  );
  if (!fetched.ok) return withAgents(store, report());

  const budget = await remoteBudget(store, remote);
  const id = `probe-${machine}-${randomBytes(4).toString("hex")}`;
  const ref = inputsRef(id);
  const probe = writeBundle(store, { file: INPUTS_FILE, record: { task: id, context: [], files: [] }, folders: {}, message: `git handoff test: probe from ${machine}\n`, parent: null });
  const [pushed, pushMs] = await timed(() => pushWithLease(store.storeCwd, remote, [{ ref, new: probe, expected: null }], callTimeout(budget), store.actor.agent));
  const landed = pushed.kind === "done" && pushed.status.get(ref) === "ok";
  if (!landed) {
    const why = pushed.kind === "done" ? [pushed.reasons.get(ref) || "refused", pushed.remoteMessage ? `remote said: ${pushed.remoteMessage.split("\n")[0]}` : ""].filter(Boolean).join("; ") : pushed.message;
    checks.push({ name: "push", ok: false, detail: `${remote} refused the probe ref ${ref}: ${why}`, fix: "check your write access to the remote and its hooks (a pre-receive hook or a protected namespace); a host that takes only branches needs a branch prefix for handoff refs", ms: pushMs });
    return withAgents(store, report());
  }
  checks.push({ name: "push", ok: true, detail: `pushed the probe ref ${ref}`, fix: null, ms: pushMs });

  const [back, backMs] = await timed(() => lsRemoteRefs(store.cwd, remote, [ref], callTimeout(budget)));
  const same = back.ok && back.tips.get(ref) === probe;
  checks.push(
    same
      ? { name: "read back", ok: true, detail: `read it back: round trip ${pushMs + backMs} ms (push ${pushMs} ms, read ${backMs} ms)`, fix: null, ms: pushMs + backMs }
      : { name: "read back", ok: false, detail: back.ok ? `${remote} answered ${back.tips.get(ref) ?? "nothing"} for ${ref}, not the probe pushed` : `cannot read ${ref} back: ${back.message}`, fix: "the push reported success but the remote does not show it: a proxy or mirror may sit between; push to the primary URL", ms: backMs },
  );

  const [removed, removeMs] = await timed(() => pushWithLease(store.storeCwd, remote, [{ ref, new: null, expected: probe }], callTimeout(budget), store.actor.agent));
  const gone = removed.kind === "done" && removed.status.get(ref) === "ok";
  checks.push(
    gone
      ? { name: "remove", ok: true, detail: `removed the probe ref`, fix: null, ms: removeMs }
      : { name: "remove", ok: false, detail: `cannot remove ${ref} from ${remote}: ${removed.kind === "done" ? removed.reasons.get(ref) || removed.remoteMessage : removed.message}`, fix: `remove it by hand: git push ${remote} :${ref} (a remote that refuses deletions keeps leftover refs)`, ms: removeMs },
  );

  if (opts.roundTrip) await roundTrip(store, opts.roundTrip, opts.roundTripText ?? "", opts, checks);
  return withAgents(store, report());
}

/** A probe task to a worker at `to`, waited on like `git handoff wait`; cancelled when nobody finishes it. */
async function roundTrip(store: Store, to: Address, text: string, opts: { timeoutMs: number; signal: AbortSignal }, checks: LinkCheck[]): Promise<void> {
  const t0 = Date.now();
  const task = await createHandover(store, { objective: "git handoff test: a round-trip probe. Do nothing else: answer OK.", priority: 0, to, inputs: { context: new Map(), files: new Map() } });
  const end = await waitForFinal(store, task.id, { deadline: t0 + opts.timeoutMs, signal: opts.signal, progress: () => {}, warn: () => {}, justPushed: true });
  const ms = Date.now() - t0;
  if (end.kind === "final" && end.task.status === "done") {
    checks.push({ name: "round trip", ok: true, detail: `round trip to ${text}: ${task.id} done in ${ms} ms`, fix: null, ms });
    return;
  }
  if (end.kind !== "final") await cancel(store, task.id, "git handoff test: the round trip ran out of time").catch(() => {});
  const detail = end.kind === "final" ? `round trip to ${text}: ${task.id} ${end.task.status}${end.task.result?.reason ? `: ${end.task.result.reason}` : ""}` : `round trip to ${text}: nobody finished ${task.id} within ${Math.round(opts.timeoutMs / 1000)} s (cancelled)`;
  checks.push({ name: "round trip", ok: false, detail, fix: `start a worker there: git handoff worker --with claude (or --exec CMD) in a clone on that machine`, ms });
}

async function withAgents(store: Store, r: LinkReport): Promise<LinkReport> {
  const now = store.now();
  const { agents } = await listAgents(store);
  r.agents = agents
    .map((a) => a.record)
    .filter((a) => now.getTime() - Date.parse(a.heartbeat_at) <= RECENT_MS)
    .sort((x, y) => Date.parse(y.heartbeat_at) - Date.parse(x.heartbeat_at))
    .slice(0, MAX_LISTED)
    .map((a) => ({ agent: a.agent, machine: a.machine ?? null, status: classifyAgent(a, now, { staleAfterMs: store.config.staleAfterMs, disconnectedAfterMs: store.config.disconnectedAfterMs }), heartbeat_at: a.heartbeat_at, age_ms: now.getTime() - Date.parse(a.heartbeat_at) }));
  return r;
}
