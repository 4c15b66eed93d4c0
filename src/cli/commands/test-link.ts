import type { Command } from "commander";
import { parseDuration } from "../../core/duration.ts";
import { EXIT_CODES } from "../../core/errors.ts";
import { neutralise } from "../../present/untrusted.ts";
import { testLink, type LinkReport } from "../../sync/link-test.ts";
import { catchInterrupts } from "../../work/interrupts.ts";
import { globals, withGlobals, withStore } from "../context.ts";
import { addressOption } from "./address-option.ts";

interface TestOpts {
  roundTrip?: string;
  timeout: string;
}

export function registerTest(program: Command): void {
  withGlobals(
    program
      .command("test")
      .description("check that this clone reaches the sync remote both ways (a probe ref pushed, read back and removed), time the round trip, list the agents seen recently; exit 3 when a link fails")
      .option("--round-trip <address>", "also hand a probe task to a worker at this address (KIND@MACHINE, KIND or @MACHINE) and time the whole wait")
      .option("--timeout <duration>", "how long the round trip may take before it counts as failed (the probe task is cancelled)", "60s"),
    { writes: true },
  ).action(async (o: TestOpts, cmd: Command) => {
    const to = o.roundTrip !== undefined ? addressOption(o.roundTrip) : null;
    const timeoutMs = parseDuration(o.timeout, "--timeout");
    await withStore(cmd, async (store) => {
      store.syncOptions = { ...store.syncOptions, push: true };
      // Ctrl-C ends the round trip's wait (its probe task is cancelled) and reports what was found.
      const stop = catchInterrupts();
      try {
        const r = await testLink(store, { roundTrip: to, roundTripText: o.roundTrip ?? "", timeoutMs, signal: stop.signal });
        process.stdout.write(globals(cmd).json ? JSON.stringify(r, null, 2) + "\n" : render(r));
        if (!r.ok) process.exitCode = EXIT_CODES.remote_unreachable;
      } finally {
        stop.close();
      }
    });
  });
}

const ago = (ms: number) => (ms < 120_000 ? `${Math.round(ms / 1000)} s` : ms < 7_200_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 3_600_000)} h`);

function render(r: LinkReport): string {
  const lines = [`git handoff test from machine ${r.machine}${r.remote ? ` to ${r.remote}` : ""}`];
  for (const c of r.checks) {
    lines.push(`${c.ok ? "✓" : "✗"} ${c.name}: ${neutralise(c.detail)}${c.ms !== null && c.name !== "read back" && c.name !== "round trip" ? ` (${c.ms} ms)` : ""}`);
    if (c.fix) lines.push(`    fix: ${c.fix}`);
  }
  lines.push(r.agents.length ? "agents seen in the last 24 h (newest first):" : "no agent has a heartbeat in the last 24 h here");
  for (const a of r.agents) lines.push(`  ${neutralise(a.agent)}${a.machine ? ` on ${neutralise(a.machine)}` : ""}: ${a.status}, last heartbeat ${ago(a.age_ms)} ago (${a.heartbeat_at})`);
  return lines.join("\n") + "\n";
}
