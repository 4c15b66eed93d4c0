// The machine this clone runs on, as agents on other machines address it: `git config
// handoff.machine`, else the host name. Recorded in agent declarations; an addressed task is
// matched against it, never against a parse of an agent's name.
import { hostname } from "node:os";
import { machineProblem, type Taker } from "../core/address.ts";
import { fail } from "../core/errors.ts";
import { sanitizeIdPart } from "../core/ids.ts";
import { configGet } from "../git/config.ts";
import { scanConfig } from "../git/config-scan.ts";
import type { Store } from "./store.ts";

const cache = new WeakMap<Store, Promise<string>>();

export function defaultMachine(): string {
  return sanitizeIdPart(hostname().split(".")[0] ?? "host").replace(/@/g, "-");
}

/** Read once per store: one `git config` call, only by the operations that need it. */
export function localMachine(store: Store): Promise<string> {
  let found = cache.get(store);
  if (!found) {
    found = readSetting(store).then((set) => {
      if (set === null) return defaultMachine();
      const problem = machineProblem(set);
      if (problem) fail("invalid_input", `git config handoff.machine is ${JSON.stringify(set.slice(0, 80))}: it ${problem}`, {}, [{ action: "fix_input", detail: "git config handoff.machine NAME (letters, digits, . _ + -)" }]);
      return set;
    });
    cache.set(store, found);
  }
  return found;
}

/**
 * handoff.machine, read along with the sync remote's settings when the repository can have a
 * remote (one read for both); else from git's configuration files in process (config-scan.ts), and
 * from `git config` only where those cannot be read as git would (an include, say): a one-shot
 * claim of an addressed task, and each MCP server's first `claim_next`, started a git process for
 * this one setting.
 */
async function readSetting(store: Store): Promise<string | null> {
  const remote = await store.syncRemote().catch(() => null);
  const seen = remote === null ? undefined : (await import("../git/configured-remote.ts")).seenSetting(store.cwd, "handoff.machine");
  if (seen !== undefined) return seen;
  const scanned = scannedMachine(store);
  return scanned !== undefined ? scanned : configGet(store.cwd, "handoff.machine");
}

/** handoff.machine as git's files give it (the last one set wins, as for `git config --get`); undefined: ask git. */
function scannedMachine(store: Store): string | null | undefined {
  const entries = scanConfig(process.env, store.repo.commonDir, null, (s, sub, k) => s === "handoff" && sub === null && k === "machine", null, store.configRead());
  if (entries === null) return undefined;
  // As configGet reads git's answer: trimmed, and empty (or a key with no value at all) is unset.
  return entries.at(-1)?.value?.trim() || null;
}

/** The store's agent as a taker of addressed tasks. */
export async function takerOf(store: Store): Promise<Taker> {
  return { agent: store.actor.agent, machine: await localMachine(store) };
}
