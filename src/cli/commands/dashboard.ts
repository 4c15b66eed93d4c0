import { existsSync } from "node:fs";
import { join } from "node:path";
import { currentDir, resolveDir } from "../../git/repo.ts";
import type { Command } from "commander";
import { parseDuration } from "../../core/duration.ts";
import { fail, HandoffError, type Refusal } from "../../core/errors.ts";
import { loadBundle } from "../code-cache.ts";
import { globals, parseInteger, withGlobals } from "../context.ts";

interface DashboardModule {
  runDashboard(o: { cwd: string; agent?: string; port: number; open: boolean; readOnly: boolean; syncMs: number | null; json: boolean }): Promise<void>;
}

/** The server lives in its own bundle, loaded only here, so other verbs start as fast as before. */
function loadDashboard(): DashboardModule {
  const bundle = typeof __dirname === "string" ? join(__dirname, "dashboard-main.cjs") : "";
  if (!bundle || !existsSync(bundle)) fail("internal", "the dashboard bundle is missing: run npm run build");
  return loadBundle(bundle) as DashboardModule;
}

export function registerDashboard(program: Command): void {
  withGlobals(
    program
      .command("dashboard")
      .description("serve a live local web dashboard on 127.0.0.1: agents, task board, matrix, dependencies, leases, review queue, events, stats, sync health")
      .option("--port <n>", "port on 127.0.0.1 (0 picks a free one)", "0")
      .option("--host <address>", "bind address: only 127.0.0.1 is accepted", "127.0.0.1")
      .option("--open", "open the link in the default browser")
      .option("--read-only", "no actions from the page (accept, reject, reclaim, force-release)")
      .option("--sync <duration>", "fetch from the sync remote this often, like 30s (fetch only: the dashboard never pushes)"),
  ).action(async (o: { port: string; host: string; open?: boolean; readOnly?: boolean; sync?: string }, cmd: Command) => {
    if (o.host !== "127.0.0.1") fail("invalid_input", `the dashboard binds to 127.0.0.1 only, not ${JSON.stringify(o.host)}: the page can change coordination state`);
    const g = globals(cmd);
    const port = parseInteger(o.port, "--port", 0, 65535);
    const syncMs = o.sync !== undefined ? parseDuration(o.sync, "--sync") : null;
    try {
      await loadDashboard().runDashboard({
        cwd: g.C ? resolveDir(g.C) : currentDir(),
        ...(g.agent !== undefined ? { agent: g.agent } : {}),
        port,
        open: !!o.open,
        readOnly: !!o.readOnly,
        syncMs,
        json: !!g.json,
      });
    } catch (e) {
      // The bundle has its own copy of the error class: carry the refusal over to ours.
      const refusal = (e as { refusal?: Refusal } | null)?.refusal;
      if (refusal && !(e instanceof HandoffError)) throw new HandoffError(refusal);
      throw e;
    }
  });
}
