import type { Command } from "commander";
import { currentDir, resolveDir } from "../git/repo.ts";
import { fail } from "../core/errors.ts";
import { refreshHeartbeat } from "../store/agent-store.ts";
import type { Store } from "../store/store.ts";
import { openSyncedStore } from "../sync/open.ts";
import { PACK_LOOSE_AT } from "../sync/pack-refs.ts";
import { packAfterView } from "./view-packing.ts";
import { neutralise } from "../present/untrusted.ts";
import { writeErr } from "../present/output.ts";
import { completes } from "./completes.ts";
import { globalOptionsOf, type GlobalsSpec } from "./verb-spec.ts";

/** Options every command accepts, before or after the verb. */
export interface GlobalOptions {
  agent?: string;
  json?: boolean;
  C?: string;
  push?: boolean;
  offline?: boolean;
}

export function globals(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals() as GlobalOptions;
}

/**
 * Adds the global options (verb-spec.ts GLOBAL_OPTIONS) to a leaf command, so `git handoff task
 * list --json` works too. `writes` marks a verb that changes coordination state: only those take
 * --push and --offline. `values` says what a shell completes the command's arguments and options to (completes.ts).
 */
export function withGlobals(cmd: Command, opts: GlobalsSpec = {}): Command {
  for (const o of globalOptionsOf(opts)) cmd.option(o.flags, o.description);
  completes(cmd, opts.agent !== false ? { "-C": "dir", "--agent": "agent" } : { "-C": "dir" });
  return opts.values ? completes(cmd, opts.values) : cmd;
}

/** The folder the command runs as if started in: -C, else the current folder. */
export function startDir(cmd: Command): string {
  return startDirOf(globals(cmd));
}

function startDirOf(opts: GlobalOptions): string {
  return opts.C ? resolveDir(opts.C) : currentDir();
}

/** Opens the repository named by -C (or the current folder) for the command, then closes it. */
export async function withStore<T>(cmd: Command, fn: (store: Store, opts: GlobalOptions) => Promise<T>, how: { agentFilters?: boolean } = {}): Promise<T> {
  const opts = globals(cmd);
  // A verb whose own --agent filters what it shows (events, leases): the caller is named only
  // before the verb. Merged with the verb's options, the filter had become the caller, whose
  // heartbeat the command then refreshed.
  if (how.agentFilters) opts.agent = (cmd.parent?.optsWithGlobals() as GlobalOptions | undefined)?.agent;
  return withStoreFor(opts, fn);
}

/**
 * withStore for the options a command line gave (commander's `optsWithGlobals()`, or the same
 * read by fast-line.ts): what every verb does around its own work.
 */
export async function withStoreFor<T, O extends GlobalOptions>(opts: O, fn: (store: Store, opts: O) => Promise<T>): Promise<T> {
  const cwd = startDirOf(opts);
  const store = await openSyncedStore({
    cwd,
    ...(opts.agent !== undefined ? { agent: opts.agent } : {}),
    ...(opts.push ? { push: true } : {}),
    ...(opts.offline ? { offline: true } : {}),
  });
  store.onWait = (m) => writeErr(`git-handoff: ${neutralise(m)}\n`);
  try {
    const result = await fn(store, opts).catch((e: unknown) => Promise.reject(store.explainFailure(e)));
    // Every successful command of an agent with an open session refreshes its heartbeat (throttled).
    await refreshHeartbeat(store);
    for (const n of store.notices) writeErr(`git-handoff: ${neutralise(n)}\n`);
    // The next command's opening takes git's config files from here while they stay as they are
    // (config-memo.ts): written once after they change, as the pre-edit hook does after its answer.
    store.saveConfigMemo();
    // A listing that read many loose ref files (a claim's capacity check reads every task's): they
    // are packed now that the answer is out, so the next command reads one file (pack-refs.ts).
    if (store.looseRefsListed >= PACK_LOOSE_AT) await packAfterView(store);
    return result;
  } finally {
    store.close();
  }
}

export function parseInteger(value: string, what: string, min = -1_000_000, max = 1_000_000): number {
  if (!/^-?\d+$/.test(value.trim())) fail("invalid_input", `${what} must be a whole number, got ${JSON.stringify(value)}`);
  const n = Number(value);
  if (n < min || n > max) fail("invalid_input", `${what} must be between ${min} and ${max}, got ${n}`);
  return n;
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
