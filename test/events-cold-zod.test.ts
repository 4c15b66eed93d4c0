// A cold `events` answered from the event index sets up no zod (scripts/lazy-zod.mjs): its help
// and its check of --type read the event types from EVENT_TYPES, the list the schema is built from,
// where they read the schema's options, which set zod up (~150 KB of the young generation and a
// collection, before its answer). zod marks its setting up with globalThis.__zod_globalConfig.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { EVENT_TYPES, EventType } from "../src/core/event.ts";
import { CLI, cleanEnv, cleanupTemp, cli, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

/** Runs the CLI with a probe that says, at exit, whether zod was set up. */
function probed(repo: string, args: string[]): { status: number | null; stdout: string; stderr: string; zod: boolean } {
  const dir = tempDir();
  const out = join(dir, "zod.txt");
  const probe = join(dir, "probe.cjs");
  writeFileSync(probe, `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(out)}, String(globalThis.__zod_globalConfig !== undefined)));`);
  const r = spawnSync(process.execPath, ["--require", probe, CLI, ...args], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: "a2" }), encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, zod: readFileSync(out, "utf8") === "true" };
}

test("the event types are the schema's", () => {
  assert.equal([...EventType.options], [...EVENT_TYPES]);
});

test("a cold events answered from the index sets up no zod, and an unknown type is refused naming the types", () => {
  const repo = tempRepo();
  for (const id of ["t1", "t2"]) assert.is(cli(["task", "add", `work ${id}`, "--id", id], { cwd: repo, agent: "a1" }).code, 0);
  assert.is(cli(["claim", "t1"], { cwd: repo, agent: "a1" }).code, 0);
  assert.is(cli(["events"], { cwd: repo, agent: "a2" }).code, 0); // the index built
  for (const args of [["events", "--agent", "a1", "--limit", "2"], ["events", "--type", "claimed"], ["events", "--help"]]) {
    const r = probed(repo, args);
    assert.is(r.status, 0, `${args.join(" ")}: ${r.stderr}`);
    assert.is(r.zod, false, `${args.join(" ")} set up zod`);
    if (args[1] === "--type") assert.match(r.stdout, /claimed\s+t1\s+a1/);
    if (args[1] === "--help") assert.ok(r.stdout.replace(/\s+/g, " ").includes(`only this type, one of: ${EVENT_TYPES.join(", ")} --limit`), r.stdout);
  }
  const bad = probed(repo, ["events", "--type", "nope"]);
  assert.is(bad.status, 2);
  assert.match(bad.stderr, new RegExp(`unknown event type "nope": use one of ${EVENT_TYPES.slice(0, 12).join(", ")}, … \\(all ${EVENT_TYPES.length}: git handoff help events\\)`));
});

test.run();
