// The clocks of the takeover-grace view tests (grace-views, grace-tasks): a remote and two clones,
// bob's claims and leases written for one minute from T in one, read from the other at INSIDE
// (30 s past their expiry, inside the 60 s grace) and at PAST (after it).
import type { Page } from "playwright-core";
import { buildSnapshot, type Snapshot } from "../../src/dashboard/snapshot.ts";
import { openSyncedStore } from "../../src/sync/open.ts";
import { launchBrowser } from "./browser.ts";
import { startDashboard } from "./dashboard.ts";
import { cleanEnv, gitOut, tempRepo } from "./repo.ts";
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

/** The dashboard's state as alice's server would build it in clone `a` at `ms`. */
export async function snapshotAt(a: string, ms: number): Promise<Snapshot> {
  const store = await openSyncedStore({ cwd: a, agent: "alice", env: cleanEnv(at(ms)) });
  try {
    return await buildSnapshot(store, { merges: new Map(), commits: new Map(), lastSync: null }, true);
  } finally {
    store.close();
  }
}

/** The text of the elements `selector` names in the dashboard's `view`, as alice's browser shows them at INSIDE. */
export async function dashboardText(a: string, view: string, selector: string, more?: (page: Page) => Promise<void>): Promise<string> {
  const dash = await startDashboard(a, [], { HANDOFF_AGENT: "alice", ...at(INSIDE) });
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(dash.link);
    await page.click(`nav a[data-view=${view}]`);
    await page.waitForSelector(`#view-${view}.active > *`);
    const text = (await page.locator(selector).allTextContents()).join("\n");
    await more?.(page);
    return text;
  } finally {
    await browser.close();
    await dash.stop();
  }
}
