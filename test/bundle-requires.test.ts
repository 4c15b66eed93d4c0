// A bundle's modules each require the builtins they use (hot-main.cjs: node:fs 48 times, node:path
// 30), and every require of a builtin goes through Node's loader again, ~5 us each in a cold
// process. The loader (code-cache.ts) answers each id once and keeps the answer, and takes Node's
// Module class from the dispatcher's own module rather than from node:module, whose code it loaded.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, tempRepo } from "./support/repo.ts";
import { probedRun } from "./support/cold-probe.ts";

test.after(cleanupTemp);

test("a cold task show, check or claim asks Node's loader for each module id once", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "look at me", "--id", "t1", "--scope", "src/**"], { cwd: repo, agent: "a1" }).code, 0);
  const hook = [
    `const Module = require("module");`,
    `const asked = {};`,
    `const real = Module.prototype.require;`,
    `Module.prototype.require = function (id) { if (/-main\\.cjs$/.test(this.filename)) asked[id] = (asked[id] ?? 0) + 1; return real.call(this, id); };`,
  ];
  for (const args of [["task", "show", "t1"], ["check", "src/a.ts"], ["claim", "t1"]]) {
    const r = probedRun(repo, args, "JSON.stringify(asked)", hook);
    assert.is(r.status, 0, r.stderr);
    const asked = JSON.parse(r.seen) as Record<string, number>;
    assert.ok(asked["node:fs"], `${args.join(" ")}: the probe saw the bundle's requires`);
    for (const [id, n] of Object.entries(asked)) assert.is(n, 1, `${args.join(" ")}: ${id} asked ${n} times`);
  }
});

test("the dispatcher loads a bundle without node:module (Module is the class of its own module)", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "look at me", "--id", "t1", "--scope", "src/**"], { cwd: repo, agent: "a1" }).code, 0);
  for (const args of [["task", "show", "t1"], ["check", "src/a.ts"], ["claim", "t1"]]) {
    const r = probedRun(repo, args, `process.moduleLoadList.join("\\n")`);
    assert.is(r.status, 0, r.stderr);
    const loaded = r.seen.split("\n");
    assert.ok(loaded.includes("NativeModule vm"), `${args.join(" ")}: the probe saw the loader's builtins`);
    assert.not.ok(loaded.includes("NativeModule module"), `${args.join(" ")} loaded node:module`);
  }
});

test.run();
