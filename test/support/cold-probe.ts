// A cold CLI process with a probe preloaded (`node --require`): at exit the probe writes what it
// saw (what the bundle set up, loaded or asked for) to a file, read back here. The tests of what a
// cold command does not load or set up share it.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, cleanEnv, tempDir } from "./repo.ts";

export interface Probed {
  status: number | null;
  stdout: string;
  stderr: string;
  /** What the probe wrote at exit. */
  seen: string;
}

/**
 * Runs `args` in `repo` with a probe that writes `String(<seen>)` at exit, `seen` a JavaScript
 * expression evaluated then; `preamble`: lines the probe runs first (a hook on the loader).
 */
export function probedRun(repo: string, args: string[], seen: string, preamble: string[] = []): Probed {
  const dir = tempDir();
  const out = join(dir, "seen.txt");
  const probe = join(dir, "probe.cjs");
  writeFileSync(probe, [...preamble, `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(out)}, String(${seen})));`].join("\n"));
  const r = spawnSync(process.execPath, ["--require", probe, CLI, ...args], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: "a2" }), encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, seen: readFileSync(out, "utf8") };
}

/** As probedRun, saying whether zod was set up (it marks that with globalThis.__zod_globalConfig). */
export function zodProbed(repo: string, args: string[]): Omit<Probed, "seen"> & { zod: boolean } {
  const { seen, ...r } = probedRun(repo, args, "globalThis.__zod_globalConfig !== undefined");
  return { ...r, zod: seen === "true" };
}
