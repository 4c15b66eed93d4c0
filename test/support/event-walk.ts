// The event-index tests' oracle: what a walk of the whole history answers (no index), in process.
import { readEvents } from "../../src/store/events.ts";
import { openSyncedStore } from "../../src/sync/open.ts";
import * as assert from "uvu/assert";
import { cli, type CliResult } from "./repo.ts";
import type { Actor } from "./seed.ts";

export async function walked(repo: string, filter: Parameters<typeof readEvents>[1] = {}) {
  const store = await openSyncedStore({ cwd: repo, agent: "oracle" });
  try {
    return await readEvents(store, filter, { onProblem: () => {} });
  } finally {
    store.close();
  }
}

/** The event-index tests' clock: T0, and a time `ms` past it. */
export const T0 = "2026-11-29T10:00:00.000Z";
export const MIN = 60_000;
export const plus = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();
export const by = (repo: string, agent: string, ms: number): Actor => ({ cwd: repo, agent, now: plus(ms) });

/** The CLI run as a reader an hour past T0, which must succeed. */
export function run(repo: string, args: string[]): CliResult {
  const r = cli(args, { cwd: repo, agent: "reader", env: { HANDOFF_NOW: plus(60 * MIN) } });
  assert.is(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
  return r;
}
export const events = (repo: string, ...args: string[]) => run(repo, ["events", ...args, "--json"]).json;
