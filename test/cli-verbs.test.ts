// A one-shot call builds only its verb's commands (program.ts VERBS; a group may add only the verb
// run): the table must name exactly what each register function adds, and a verb's help and
// errors must read as with every verb.
import { Command } from "commander";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { buildProgram, VERBS, verbOf } from "../src/cli/program.ts";
import { cleanupTemp, cli, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const names = (c: Command) => c.commands.flatMap((x) => [x.name(), ...x.aliases()]);

test("the verb table names exactly the verbs each register function adds, in the program's order", () => {
  for (const [register, verbs] of VERBS) {
    const p = new Command("x");
    register(p);
    assert.equal(names(p), verbs, register.name);
  }
  assert.equal(names(buildProgram()), VERBS.flatMap(([, v]) => v));
});

test("a command line builds its verb's group only (of the claim and lease groups, its verb alone); help, completion and unknown verbs build all", () => {
  assert.equal(names(buildProgram(["claim", "t1"])), ["claim"]);
  assert.equal(names(buildProgram(["--agent", "a", "cancel", "t1", "--reason", "r"])), ["cancel"]);
  assert.equal(names(buildProgram(["check", "src/a.ts"])), ["check"]);
  assert.equal(names(buildProgram(["unlease", "src/a.ts"])), ["unlease"]);
  // Each verb built alone is the very command the whole program has: the same help, option for option.
  const whole = buildProgram();
  for (const verb of ["claim", "renew", "release", "done", "fail", "reclaim", "cancel", "lease", "unlease", "leases", "check"]) {
    const alone = buildProgram([verb]).commands;
    assert.equal(alone.map((c) => c.name()), [verb]);
    assert.is(alone[0]!.helpInformation(), whole.commands.find((c) => c.name() === verb)!.helpInformation(), verb);
  }
  assert.equal(names(buildProgram(["-C", "dir", "--agent", "a", "--json", "task", "show", "x"])), ["task", "tasks"]);
  const all = names(buildProgram());
  for (const argv of [["help"], ["help", "claim"], ["completion", "bash"], ["no-such-verb"], ["--version"], []]) {
    assert.equal(names(buildProgram(argv)), all, argv.join(" "));
  }
  assert.is(verbOf(["--agent", "claim", "status"]), "status", "an option's value is not the verb");
});

test("a verb's help, and a bad option's error, read the same as from the whole program", () => {
  const repo = tempRepo();
  const short = cli(["claim", "--help"], { cwd: repo });
  const viaHelp = cli(["help", "claim"], { cwd: repo });
  assert.is(short.code, 0);
  assert.is(short.stdout, viaHelp.stdout);
  assert.match(short.stdout, /Examples:/);
  const bad = cli(["claim", "--no-such-option"], { cwd: repo });
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /unknown option '--no-such-option'/);
  assert.match(bad.stderr, /git handoff help claim shows how to use it/);
});

test.run();
