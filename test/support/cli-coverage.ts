// The built CLI run with V8's coverage on (NODE_V8_COVERAGE): how often each function of
// hot-main.cjs (and of hot-main-lazy-*.cjs, its lazy groups' files) ran, by name, counted by V8 itself. Tests of what a cold command runs and what it
// leaves alone read it (bundle-lazy-group, check-per-lease-work, small-object-codec).
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as assert from "uvu/assert";
import { CLI, cleanEnv, tempDir } from "./repo.ts";

interface Coverage {
  result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[];
}

export interface CliCoverage {
  status: number | null;
  stdout: string;
  stderr: string;
  /** The names of the functions of hot-main.cjs and of its lazy groups' files (those read), each as often as it is declared. */
  names: string[];
  /** How often the functions of that name ran, all of them together. */
  calls: (name: string) => number;
}

/** `git handoff <args>` in `repo` as `agent`, with a code cache of its own. */
export function cliCoverage(repo: string, args: string[], agent: string): CliCoverage {
  const dir = tempDir();
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: agent, NODE_V8_COVERAGE: dir, XDG_CACHE_HOME: tempDir() }), encoding: "utf8" });
  const scripts = readdirSync(dir).flatMap((f) => (JSON.parse(readFileSync(join(dir, f), "utf8")) as Coverage).result);
  const hot = scripts.find((s) => s.url.endsWith("/hot-main.cjs"));
  assert.ok(hot, `${args.join(" ")} ran hot-main.cjs`);
  // The lazy groups' code is in files beside it (scripts/lazy-file.mjs), each read when its group is first asked for.
  const functions = [...hot!.functions, ...scripts.filter((s) => /\/hot-main-lazy-\w+\.cjs$/.test(s.url)).flatMap((s) => s.functions)];
  const calls = (name: string) => functions.filter((f) => f.functionName === name).reduce((n, f) => n + f.ranges[0]!.count, 0);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, names: functions.map((f) => f.functionName), calls };
}
