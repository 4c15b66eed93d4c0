// The dispatcher (dist/git-handoff.cjs) is compiled by Node from its text at every start, with no
// code cache: its functions are written so that V8 compiles them with the script, in one parse,
// not each again at its first call (scripts/eager-compile.mjs). What is checked, by V8's own log
// of what it compiled when (`--log-function-events`): a cold `task show` and `check` compile at
// their first call only the dispatcher's one-line arrow functions, and still answer as before.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, cleanEnv, cleanupTemp, cli, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

/** The dispatcher's functions V8 ran in `args`, and those it compiled at their first call: [start, end, name]. */
function compiledAtCall(repo: string, args: string[]): { ran: string[]; lazy: [number, number, string][]; stdout: string } {
  const dir = tempDir();
  const log = join(dir, "v8.log");
  const env = cleanEnv({ HANDOFF_AGENT: "a1", XDG_CACHE_HOME: dir });
  // Twice: the first run under the flag writes a code cache of its own for the bundle (V8 keys
  // caches by its flags); the second reads it and writes none, as a command after the first does.
  let stdout = "";
  for (let i = 0; i < 2; i++) {
    const r = spawnSync(process.execPath, ["--log-function-events", `--logfile=${log}`, "--no-logfile-per-isolate", CLI, ...args], { cwd: repo, env, encoding: "utf8" });
    assert.is(r.status, 0, r.stderr);
    stdout = r.stdout;
  }
  const rows = readFileSync(log, "latin1").split("\n").map((l) => l.split(","));
  const id = rows.find((r) => r[0] === "script-details" && r[2] === CLI)?.[1];
  assert.ok(id, "V8's log names the dispatcher's script");
  const events = rows.filter((r) => r[0] === "function" && r[2] === id);
  return {
    ran: events.filter((r) => r[1] === "first-execution").map((r) => r[7] ?? ""),
    lazy: events.filter((r) => r[1] === "parse-function").map((r) => [Number(r[3]), Number(r[4]), r[7] ?? ""]),
    stdout,
  };
}

test("a cold task show and check compile the dispatcher's functions with it, not at each first call", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "first", "--id", "t1", "--scope", "src/a.ts"], { cwd: repo, agent: "a1" }).code, 0);
  for (const args of [["task", "show", "t1"], ["check", "src/a.ts"]]) {
    const { ran, lazy, stdout } = compiledAtCall(repo, args);
    assert.match(stdout, args[0] === "task" ? /^t1 {2}todo/ : /src\/a\.ts/);
    // What every command runs before its bundle: the verb, the code cache's path, the reads.
    for (const name of ["verbOf", "cacheVariant", "loadBundle", "cacheDir", "readBoth", "readExactly"]) assert.ok(ran.includes(name), `${args.join(" ")} ran ${name}`);
    // Compiled at a call: the arrows of a line each (~30-90 characters), never a declared function.
    const text = lazy.reduce((n, [start, end]) => n + end - start, 0);
    assert.ok(text < 500, `${args.join(" ")} compiled ${text} characters of the dispatcher at calls: ${lazy.map(([s, e, n]) => `${n || "(anonymous)"} ${e - s}`).join(", ")}`);
  }
});

test.run();
