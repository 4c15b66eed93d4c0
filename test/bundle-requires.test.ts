// A bundle's modules each require the builtins they use (hot-main.cjs: node:fs 48 times, node:path
// 30), and every require of a builtin goes through Node's loader again, ~5 us each in a cold
// process. The loader (code-cache.ts) answers each id once and keeps the answer, and takes Node's
// Module class from the dispatcher's own module rather than from node:module, whose code it loaded.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, cleanEnv, cleanupTemp, cli, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

test("a cold task show, check or claim asks Node's loader for each module id once", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "look at me", "--id", "t1", "--scope", "src/**"], { cwd: repo, agent: "a1" }).code, 0);
  const dir = tempDir();
  const out = join(dir, "requires.json");
  const probe = join(dir, "probe.cjs");
  writeFileSync(
    probe,
    [
      `const Module = require("module");`,
      `const asked = {};`,
      `const real = Module.prototype.require;`,
      `Module.prototype.require = function (id) { if (/-main\\.cjs$/.test(this.filename)) asked[id] = (asked[id] ?? 0) + 1; return real.call(this, id); };`,
      `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(out)}, JSON.stringify(asked)));`,
    ].join("\n"),
  );
  for (const args of [["task", "show", "t1"], ["check", "src/a.ts"], ["claim", "t1"]]) {
    const r = spawnSync(process.execPath, ["--require", probe, CLI, ...args], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: "a2" }), encoding: "utf8" });
    assert.is(r.status, 0, r.stderr);
    const asked = JSON.parse(readFileSync(out, "utf8")) as Record<string, number>;
    assert.ok(asked["node:fs"], `${args.join(" ")}: the probe saw the bundle's requires`);
    for (const [id, n] of Object.entries(asked)) assert.is(n, 1, `${args.join(" ")}: ${id} asked ${n} times`);
  }
});

test("the dispatcher loads a bundle without node:module (Module is the class of its own module)", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "look at me", "--id", "t1", "--scope", "src/**"], { cwd: repo, agent: "a1" }).code, 0);
  const dir = tempDir();
  const out = join(dir, "builtins.txt");
  const probe = join(dir, "probe.cjs");
  writeFileSync(probe, `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(out)}, process.moduleLoadList.join("\\n")));`);
  for (const args of [["task", "show", "t1"], ["check", "src/a.ts"], ["claim", "t1"]]) {
    const r = spawnSync(process.execPath, ["--require", probe, CLI, ...args], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: "a2" }), encoding: "utf8" });
    assert.is(r.status, 0, r.stderr);
    const loaded = readFileSync(out, "utf8").split("\n");
    assert.ok(loaded.includes("NativeModule vm"), `${args.join(" ")}: the probe saw the loader's builtins`);
    assert.not.ok(loaded.includes("NativeModule module"), `${args.join(" ")} loaded node:module`);
  }
});

test.run();
