// Setup written in-process through the store: the records a CLI verb writes, by the store function
// the verb itself calls, for tests whose subject is what comes after (docs/architecture.md, "The
// test suite"). Each `git-handoff` process is a whole Node start: a setup process replaced saves
// ~0.05-0.1 CPU-seconds on the forty-fourth session's machine (~0.3 on slower ones before), so a
// test that adds forty tasks before the command it tests spent most of its time starting processes.
// A verb whose exit status, output or effect a test asserts stays a real process. Importing this
// file loads the store (a bundled test process pays for it once): it pays for itself where a file
// already imports src, or replaces more than a handful of processes.
import { HandoffError } from "../../src/core/errors.ts";
import { checkVerifyCommand } from "../../src/core/verify-command.ts";
import { addressOption } from "../../src/cli/commands/address-option.ts";
import { refreshHeartbeat, startSessionFor } from "../../src/store/agent-store.ts";
import { gcAgents } from "../../src/store/agent-gc.ts";
import { addTaskAfter } from "../../src/store/dependency-actions.ts";
import { lease, normalizeScope, type LeaseResult } from "../../src/store/lease-actions.ts";
import { addMemory } from "../../src/store/memory-store.ts";
import type { Store } from "../../src/store/store.ts";
import { cancel, claimReporting, done, release, renew, type ClaimReport } from "../../src/store/task-actions.ts";
import { openSyncedStore } from "../../src/sync/open.ts";
import { packAfterView } from "../../src/cli/view-packing.ts";
import { PACK_LOOSE_AT } from "../../src/sync/pack-refs.ts";
import { cleanEnv } from "./repo.ts";

/** Who acts, where, and when: what `cli(args, { cwd, agent, env: { HANDOFF_NOW } })` and `--push` said. */
export interface Actor {
  cwd: string;
  /** Unset: the default name, as a command run without --agent or HANDOFF_AGENT has. */
  agent?: string;
  /** HANDOFF_NOW: the store's clock, as the setup command's was. */
  now?: string;
  /** --push: the write goes to the sync remote at once. */
  push?: boolean;
  /** --offline: with the sync remote out of reach, an exclusive write is granted tentatively and waits for sync. */
  offline?: boolean;
}

/**
 * Opens the store as a one-shot command does (cli/context.ts withStore: the sync layer's gate,
 * then the heartbeat refresh and the packing of piled-up loose refs after the verb), runs `fn`,
 * closes it. Throws what the verb would have reported: a failed setup fails the test.
 */
export async function asCommand<T>(at: Actor, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openSyncedStore({ cwd: at.cwd, ...(at.agent !== undefined ? { agent: at.agent } : {}), env: cleanEnv(at.now ? { HANDOFF_NOW: at.now } : {}), ...(at.push ? { push: true } : {}), ...(at.offline ? { offline: true } : {}) });
  try {
    const result = await fn(store);
    await refreshHeartbeat(store);
    if (store.looseRefsListed >= PACK_LOOSE_AT) await packAfterView(store);
    return result;
  } finally {
    store.close();
  }
}

export interface TaskSeed {
  id: string;
  objective?: string;
  priority?: number;
  scope?: string[];
  exclusive?: boolean;
  after?: string[];
  verify?: string;
  /** --to: who may take it (KIND@MACHINE, KIND or @MACHINE). */
  to?: string;
}

/** `task add OBJECTIVE --id ID [--priority N] [--scope G]... [--exclusive] [--after ID]... [--verify CMD] [--to A]`, one per task. */
export async function storeTasks(at: Actor, tasks: TaskSeed[]): Promise<void> {
  await asCommand(at, async (store) => {
    for (const t of tasks) {
      await addTaskAfter(store, {
        id: t.id,
        objective: t.objective ?? `work on ${t.id}`,
        priority: t.priority ?? 0,
        scope: normalizeScope(store, t.scope ?? []),
        maxAttempts: store.config.maxAttempts,
        ...(t.exclusive ? { exclusive: true } : {}),
        ...(t.after ? { after: t.after } : {}),
        ...(t.verify !== undefined ? { verify: checkVerifyCommand(t.verify) } : {}),
        ...(t.to !== undefined ? { to: addressOption(t.to) } : {}),
      });
      // On the real clock, one process a task never wrote two in one millisecond: ties in age would
      // order a listing by id instead of by the order the tasks were added in.
      if (at.now === undefined) await tick();
    }
  });
}

/** Until the clock has moved past this millisecond. */
async function tick(): Promise<void> {
  const ms = Date.now();
  while (Date.now() === ms) await new Promise((r) => setTimeout(r, 1));
}

/** `lease PATH... [--exclusive] [--task ID] [--ttl D] [--reason R]`, the paths read against `at.cwd` as the command's are against its folder. */
export function storeLease(at: Actor, paths: string[], o: { exclusive?: boolean; task?: string; ttl?: string; reason?: string } = {}): Promise<LeaseResult> {
  return asCommand(at, (store) => lease(store, paths, { ...o, cwd: at.cwd }));
}

/** `claim ID [--ttl D] [--force] [--over-capacity]`. */
export function storeClaim(at: Actor, id: string, o: { ttl?: string; force?: boolean; overCapacity?: boolean } = {}): Promise<ClaimReport> {
  return asCommand(at, (store) => claimReporting(store, id, { ...(o.ttl !== undefined ? { ttl: o.ttl } : {}), overCapacity: !!o.overCapacity, force: !!o.force }));
}

/** `done ID [--commit REV] [--note N]` of a task with no verify command (one with a verify command runs it: keep that a process). */
export async function storeDone(at: Actor, id: string, o: { commit?: string; note?: string } = {}): Promise<void> {
  await asCommand(at, (store) => done(store, id, o));
}

/** `release ID`. */
export async function storeRelease(at: Actor, id: string): Promise<void> {
  await asCommand(at, (store) => release(store, id));
}

/** `cancel ID --reason R`. */
export async function storeCancel(at: Actor, id: string, reason: string): Promise<void> {
  await asCommand(at, (store) => cancel(store, id, reason));
}

/** `session start --objective O [--files G]... [--awaits A]`, with the verb's sweep of agents silent past gc_after. */
export async function storeSession(at: Actor, objective: string, o: { files?: string[]; awaits?: string } = {}): Promise<void> {
  await asCommand(at, async (store) => {
    await startSessionFor(store, { objective, files: o.files ?? [], awaits: o.awaits ?? null, session: null });
    await gcAgents(store).catch(() => []);
  });
}

/** `memory add TEXT [--tag T]... [--task ID]`: its id. */
export async function storeMemory(at: Actor, text: string, o: { tags?: string[]; task?: string } = {}): Promise<string> {
  return (await asCommand(at, (store) => addMemory(store, { text, tags: o.tags ?? [], task: o.task ?? null }))).id;
}

/** `sync`: refused, as the verb's exit 3 is, when the remote holds refs kept back here. */
export async function storeSync(at: Actor): Promise<void> {
  // Loaded here: most files that seed never sync, and the sync layer is a large part of src.
  const { sync } = await import("../../src/sync/sync.ts");
  const { heldBackRefusal } = await import("../../src/sync/held-back.ts");
  const held = await asCommand(at, async (store) => heldBackRefusal(await sync(store)));
  if (held) throw new HandoffError(held);
}

/** `renew ID [--ttl D]`. */
export async function storeRenew(at: Actor, id: string, o: { ttl?: string } = {}): Promise<void> {
  await asCommand(at, (store) => renew(store, id, o.ttl !== undefined ? { ttl: o.ttl } : {}));
}

/** `unlease PATH...`, the paths read against `at.cwd` as the command's are against its folder. */
export async function storeUnlease(at: Actor, paths: string[]): Promise<void> {
  const { unlease } = await import("../../src/store/lease-actions.ts");
  const r = await asCommand(at, (store) => unlease(store, paths, { cwd: at.cwd }));
  if (r.not_released.length) throw new Error(`unlease: not held: ${r.not_released.map((n) => n.path).join(", ")}`);
}

/** `claim ID --offline`. */
export function storeClaimOffline(at: Actor, id: string): Promise<ClaimReport> {
  return asCommand({ ...at, offline: true }, (store) => claimReporting(store, id, { overCapacity: false, force: false }));
}

/** `lease PATH... --offline [--exclusive] [--ttl D]`. */
export function storeLeaseOffline(at: Actor, paths: string[], o: { exclusive?: boolean; task?: string; ttl?: string; reason?: string } = {}): Promise<LeaseResult> {
  return asCommand({ ...at, offline: true }, (store) => lease(store, paths, { ...o, cwd: at.cwd }));
}

/** `heartbeat` (no --push). */
export async function storeHeartbeat(at: Actor): Promise<void> {
  const { heartbeatWithDrift } = await import("../../src/store/agent-store.ts");
  await asCommand(at, (store) => heartbeatWithDrift(store));
}
