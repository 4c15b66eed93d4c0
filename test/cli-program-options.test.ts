// The program's own options (-V, -C, --agent, --json, --push, --offline before the verb) are built
// only for a command line that has words before its verb, or that shows the program's help: after
// the verb only the verb's options are read (enablePositionalOptions), so `task show t1` never
// needs them (program-builder.ts). Checked by V8's call counts of commander's code in a cold
// command (NODE_V8_COVERAGE) and by what each form answers.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cliCoverage } from "./support/cli-coverage.ts";
import { cleanupTemp, cli, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

test("a command line that starts with its verb builds none of the program's options; one with options before it reads them", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "first", "--id", "t1", "--scope", "src/a.ts"], { cwd: repo, agent: "a1" }).code, 0);

  const plain = cliCoverage(repo, ["task", "show", "t1"], "a1");
  assert.is(plain.status, 0, plain.stderr);
  assert.match(plain.stdout, /^t1 {2}todo/);
  assert.is(plain.calls("version"), 0, "the program's --version option was not built");

  const before = cliCoverage(repo, ["--json", "task", "show", "t1"], "a1");
  assert.is(before.status, 0, before.stderr);
  assert.is(JSON.parse(before.stdout).id, "t1", "--json before the verb is read");
  assert.is(before.calls("version"), 1);

  const help = cli(["--help"], { cwd: repo, agent: "a1" });
  assert.is(help.code, 0);
  for (const flag of ["-V, --version", "-C <dir>", "--agent <name>", "--offline"]) assert.ok(help.stdout.includes(flag), `the program's help lists ${flag}`);
});

test.run();
