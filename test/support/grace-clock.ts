// The clocks of the takeover-grace view tests (grace-views, grace-tasks): a remote and two clones,
// bob's claims and leases written for one minute from T in one, read from the other at INSIDE
// (30 s past their expiry, inside the 60 s grace) and at PAST (after it).
import { gitOut, tempRepo } from "./repo.ts";
import { cloneOf, serveRoot } from "./servers.ts";

/** HANDOFF_NOW at `ms`. */
export const at = (ms: number) => ({ HANDOFF_NOW: new Date(ms).toISOString() });
/** When the clocks start: a one-minute lease or claim taken then expires at T + 1m; its grace ends at T + 2m. */
export const T = Date.parse("2026-11-30T09:00:00.000Z");
export const INSIDE = T + 90_000;
export const PAST = T + 130_000;
export const GRACE_END = new Date(T + 120_000).toISOString();

/** A bare remote named `name` (served over HTTP) holding one commit on main, and two clones of it. */
export function twoClones(name: string): { a: string; b: string } {
  const bare = serveRoot().bare(name);
  gitOut(tempRepo(), "push", "-q", bare, "main");
  return { a: cloneOf(bare), b: cloneOf(bare) };
}
