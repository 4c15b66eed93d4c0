// A command line that runs one of `task`'s subcommands builds only that one (program-builder.ts,
// commands/task.ts): a cold `task show` built `task add` and `task list` too. (The group's other
// verb, `tasks`, is built with it, as test/cli-verbs.test.ts asks.) What each
// subcommand is (its help, its options) must not depend on whether its siblings were built.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Command } from "commander";
import { HOT_TABLE } from "../src/cli/hot-program.ts";
import { buildFrom } from "../src/cli/program-builder.ts";

const names = (c: Command | undefined) => (c?.commands ?? []).map((s) => s.name());
const find = (program: Command, path: string[]): Command | undefined => path.reduce<Command | undefined>((c, n) => c?.commands.find((s) => s.name() === n), program);

test("task show, add and list build only themselves (and tasks); task alone, help and an unknown word build every subcommand", () => {
  for (const sub of ["show", "add", "list"]) {
    const program = buildFrom(HOT_TABLE, ["--agent", "a", "task", sub, "x"]);
    assert.equal(names(program), ["task", "tasks"], sub);
    assert.equal(names(find(program, ["task"])), [sub]);
  }
  for (const argv of [["task"], ["task", "--help"], ["task", "shw"], ["tasks"], ["--agent", "task", "tasks"]]) {
    const program = buildFrom(HOT_TABLE, argv);
    assert.equal(names(find(program, ["task"])), ["add", "show", "list"], argv.join(" "));
    assert.ok(find(program, ["tasks"]), argv.join(" "));
  }
});

test("a subcommand built alone reads as it does in the whole program", () => {
  const whole = buildFrom(HOT_TABLE);
  for (const sub of ["show", "add", "list"]) {
    const alone = buildFrom(HOT_TABLE, ["task", sub]);
    assert.is(find(alone, ["task", sub])!.helpInformation(), find(whole, ["task", sub])!.helpInformation(), sub);
  }
});

test.run();
