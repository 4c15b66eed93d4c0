// Runs an agent or git hook as an agent would: `git-handoff hook <name>` (the full Node hook), or,
// with HANDOFF_TEST_HOOK=fast, through the sh fast path that init installs (git-hooks/fast-hook.sh),
// which answers itself or starts the full hook. The hook test files run once each way.
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { CLI, cleanEnv, type CliOptions, type CliResult } from "./repo.ts";

export const FAST_HOOK = resolve(import.meta.dirname, "../../git-hooks/fast-hook.sh");

export function viaFastPath(): boolean {
  return process.env.HANDOFF_TEST_HOOK === "fast";
}

/** The program and arguments that run hook `name` the way this test run uses. */
export function hookCommand(name: string): [string, string[]] {
  return viaFastPath() ? [FAST_HOOK, [name]] : [process.execPath, [CLI, "hook", name]];
}

export function runHook(name: string, o: CliOptions): CliResult {
  const [file, args] = hookCommand(name);
  const env = cleanEnv({ ...(o.agent ? { HANDOFF_AGENT: o.agent } : {}), ...o.env });
  const r = spawnSync(file, args, { cwd: o.cwd, env, encoding: "utf8", input: o.input ?? "" });
  let json: any;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr, json };
}
