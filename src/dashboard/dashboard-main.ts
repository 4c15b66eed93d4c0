// The dashboard's own bundle (dist/dashboard-main.cjs): the CLI loads it only for
// `git handoff dashboard`, so no other verb pays for the server or the page.
import { spawn } from "node:child_process";
import { FreshStore } from "../store/fresh-store.ts";
import { openSyncedStore } from "../sync/open.ts";
import { catchInterrupts } from "../work/interrupts.ts";
import { neutralise } from "../present/untrusted.ts";
import { serveDashboard } from "./server.ts";

export interface DashboardRun {
  cwd: string;
  agent?: string;
  port: number;
  open: boolean;
  readOnly: boolean;
  syncMs: number | null;
  json: boolean;
}

/** Serves until SIGINT or SIGTERM. Prints the one-time link first (JSON with --json). */
export async function runDashboard(o: DashboardRun): Promise<void> {
  // Reopened when the branch, the policy or the git config change while the dashboard runs; a
  // replaced Store stays open a minute for a request still using it.
  const fresh = new FreshStore(() => openSyncedStore({ cwd: o.cwd, warm: true, ...(o.agent !== undefined ? { agent: o.agent } : {}) }), 60_000);
  const store = await fresh.get();
  let dash;
  try {
    dash = await serveDashboard(fresh, { port: o.port, readOnly: o.readOnly, syncMs: o.syncMs, log: (l) => process.stderr.write(`git-handoff: ${neutralise(l)}\n`) });
  } catch (e) {
    fresh.close();
    throw e;
  }
  const who = `${store.actor.agent}${o.readOnly ? ", read-only" : ""}`;
  process.stdout.write(o.json ? `${JSON.stringify({ url: dash.url, port: dash.port, agent: store.actor.agent, read_only: o.readOnly })}\n` : `dashboard (${who}): ${dash.url}\n  the link works once; Ctrl-C stops the server\n`);
  if (o.open) openBrowser(dash.url);
  // The first Ctrl-C (git's copy of it included) closes the server; a later one quits at once.
  const stop = catchInterrupts();
  await new Promise<void>((resolve) => stop.signal.addEventListener("abort", () => resolve(), { once: true }));
  try {
    await dash.close();
    fresh.close();
  } finally {
    stop.close();
  }
}

function openBrowser(url: string): void {
  const cmd = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  try {
    const child = spawn(cmd, [url], { stdio: "ignore", detached: true });
    child.on("error", () => process.stderr.write(`git-handoff: could not start ${cmd}; open the link yourself\n`));
    child.unref();
  } catch {
    /* the link is printed */
  }
}
