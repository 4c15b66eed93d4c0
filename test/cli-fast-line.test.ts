// The hot verbs' plain command lines are read without commander (src/cli/fast-line.ts), from the
// same spec commander's commands are built from (verb-spec.ts). What is checked: for every line
// of many (usual, unusual, hostile) that the fast reading accepts, commander's reading of it
// through the real hot program hands the action the same arguments and options; the lines that
// must stay commander's (help, unknown or misplaced options, values that look like options, `=`
// on a switch, `--`, wrong counts) are left to it; a cold `task show`, `check`, `claim`, `task
// add` and `task list` never set commander up (V8's counts, NODE_V8_COVERAGE); and what the fast
// path answers, errors with --json included, is what commander's path answers for the same verb.
import type { Command } from "commander";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fastLine } from "../src/cli/fast-line.ts";
import { FAST_VERBS } from "../src/cli/hot-main.ts";
import { HOT_TABLE } from "../src/cli/hot-program.ts";
import { buildFrom } from "../src/cli/program-builder.ts";
import { cliCoverage } from "./support/cli-coverage.ts";
import { cleanupTemp, cli, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

type Reading = { words: string[]; args: unknown[]; opts: Record<string, unknown> } | { error: string };

/** What commander's hot program hands an action for `argv`, or the error it stops with (nothing printed, no action run). */
async function commanderReading(argv: string[]): Promise<Reading> {
  const program = buildFrom(HOT_TABLE, argv);
  let read: Reading | undefined;
  const walk = (c: Command, path: string[]): void => {
    c.configureOutput({ writeOut: () => {}, writeErr: () => {}, outputError: () => {} });
    for (const sub of c.commands) {
      const words = [...path, sub.name()];
      if (!sub.commands.length) sub.action((...a: unknown[]) => void (read = { words, args: a.slice(0, -2), opts: (a.at(-1) as Command).optsWithGlobals() }));
      walk(sub, words);
    }
  };
  walk(program, []);
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (e) {
    return { error: (e as Error).message };
  }
  return read ?? { error: "no action ran" };
}

/** A small generator of its own (xorshift), so every run tries the same lines. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

/** The hot verbs' words, and other beginnings: words before the verb, other verbs, a group alone. */
const VERBS = [["task", "show"], ["check"], ["claim"], ["task", "add"], ["task", "list"], ["tasks"]];
const OTHER_HEADS = [["--json", "task", "show"], ["-C", ".", "check"], ["--agent", "a", "claim"], ["task"], ["tasks", "list"], ["task", "lis"], ["lease"], ["release"]];
/** Words of plain lines, and words that make a line unusual or hostile. */
const PLAIN = [
  "t1", "t2", "src/a.ts", "lib/*.{ts,js}", "", " ", "é✓ 漢字", "help", "show", "bob", ".", "5m", "3", "todo", "--json", "--agent", "--agent=x", "--agent=", "--agent=a=b", "-C",
  "--ttl", "--ttl=5m", "--next", "--force", "--over-capacity", "--push", "--offline", "--id", "--priority", "--priority=2", "--scope", "--scope=src/b.ts", "--after", "--exclusive",
  "--verify", "--to", "--status", "--status=todo", "--limit", "--complete",
];
const ODD = ["-", "--", "-5", "-x", "--json=1", "--json=", "--agent=-x", "-C.", "-C=.", "--next=1", "--over", "--overCapacity", "--no-next", "-h", "--help", "--version", "-V", "--unknown", "--=x", "--exclusive=", "--scope=-a", "--no-scope", "--stat"];

const known = (line: string[]) => line.map((w) => JSON.stringify(w)).join(" ");

test("every line the fast reading accepts, commander reads the same; the others are left to commander", async () => {
  const next = random(0x5eed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const lines: string[][] = [];
  for (let i = 0; i < 5000; i++) {
    const line = [...pick(next() < 0.8 ? VERBS : OTHER_HEADS)];
    for (let n = Math.floor(next() * 7); n > 0; n--) line.push(pick(next() < 0.85 ? PLAIN : ODD));
    lines.push(line);
  }
  const accepted = new Map<string, number>();
  for (const line of lines) {
    const fast = fastLine(FAST_VERBS, line);
    if (!fast) continue;
    const name = fast.verb.spec.words.join(" ");
    accepted.set(name, (accepted.get(name) ?? 0) + 1);
    const read = await commanderReading(line);
    assert.equal(read, { words: [...fast.verb.spec.words], args: fast.args, opts: fast.opts }, known(line));
  }
  const counts = FAST_VERBS.map(({ spec }) => [spec.words.join(" "), accepted.get(spec.words.join(" ")) ?? 0] as const);
  assert.ok(Math.min(...counts.map(([, n]) => n)) >= 30, `lines the fast reading accepted: ${counts.map(([v, n]) => `${v} ${n}`).join(", ")}`);
});

test("the plain lines agents and hooks type are read fast, as commander reads them", async () => {
  const lines = [
    ["task", "show", "t1"],
    ["task", "show", "t1", "--json"],
    ["check", "src/a.ts"],
    ["check", "src/a.ts", "src/b.ts", "--json", "--agent", "bob"],
    ["check", "-C", "sub", "src/a.ts"],
    ["claim", "t1", "--agent", "a"],
    ["claim", "--next", "--ttl", "10m", "--json"],
    ["claim", "t1", "--force", "--over-capacity", "--push", "--offline"],
    ["claim", "--agent=x", "t1", "--agent", "y"],
    ["task", "show", ""],
    ["task", "show", "é✓"],
    ["claim", "t1", "--next"],
    ["task", "add", "fix", "the", "bug"],
    ["task", "add", "x", "--id", "t9", "--scope", "src/a.ts", "--scope=lib/**", "--after", "t1", "--after", "t2", "--priority", "3", "--exclusive", "--json"],
    ["task", "add", "x", "--verify", "npm test", "--to", "claude@box", "--push"],
    ["task", "list"],
    ["task", "list", "--status", "todo", "--limit", "5", "--json"],
    ["tasks", "--complete", "t"],
    ["tasks", "--complete", ""],
  ];
  for (const line of lines) {
    const fast = fastLine(FAST_VERBS, line);
    assert.ok(fast, `${known(line)} is read fast`);
    assert.equal(await commanderReading(line), { words: [...fast!.verb.spec.words], args: fast!.args, opts: fast!.opts }, known(line));
  }
});

test("help, options before the verb, unknown options, option-like values, `=` on a switch, `--` and wrong counts are commander's", () => {
  const lines = [
    ["task", "show", "t1", "--help"],
    ["task", "show", "-h"],
    ["check", "--help", "src/a.ts"],
    ["--json", "task", "show", "t1"],
    ["-C", ".", "check", "src/a.ts"],
    ["task", "show", "t1", "--unknown"],
    ["task", "show", "t1", "--version"],
    ["claim", "t1", "--agent", "--json"],
    ["claim", "t1", "--agent"],
    ["claim", "t1", "--ttl", "-5m"],
    ["claim", "t1", "--agent=-x"],
    ["check", "-C.", "src/a.ts"],
    ["check", "-C=.", "src/a.ts"],
    ["task", "show", "t1", "--json=1"],
    ["check", "--", "-a.ts"],
    ["check", "-"],
    ["task", "show", "-5"],
    ["task", "show"],
    ["task", "show", "t1", "t2"],
    ["check"],
    ["claim", "t1", "t2"],
    ["claim", "t1", "--no-next"],
    ["task", "list", "extra"],
    ["tasks", "--complete"],
    ["task", "add"],
    ["task", "add", "x", "--scope", "--json"],
    ["task", "add", "x", "--exclusive=yes"],
    ["release", "t1"],
  ];
  for (const line of lines) assert.is(fastLine(FAST_VERBS, line), undefined, known(line));
});

test("a cold task show, check, claim, task add and task list never set commander up; a line left to commander does", () => {
  const repo = tempRepo();
  for (let i = 0; i < 3; i++) assert.is(cli(["task", "add", `task ${i}`, "--id", `t${i}`, "--scope", `src/f${i}.ts`], { cwd: repo }).code, 0);
  assert.is(cli(["claim", "t0"], { cwd: repo, agent: "holder" }).code, 0);
  for (const args of [["task", "show", "t1"], ["check", "src/f0.ts", "--json"], ["claim", "t2"], ["task", "add", "another", "--scope", "src/g.ts"], ["task", "list", "--json"]]) {
    const run = cliCoverage(repo, args, "a2");
    assert.is(run.status, 0, run.stderr);
    assert.ok(run.names.includes("__lazy_commanderRun"), "commander is declared inside its lazy function");
    // commander's own functions: its default program is a Command made as its module is set up.
    for (const fn of ["__lazy_commanderRun", "Command", "parseOptions"]) assert.is(run.calls(fn), 0, `${args.join(" ")} ran ${fn}`);
  }
  const before = cliCoverage(repo, ["--json", "task", "show", "t1"], "a2");
  assert.is(before.status, 0, before.stderr);
  assert.is(before.calls("__lazy_commanderRun"), 1);
  assert.ok(before.calls("parseOptions") > 0);
});

test("what the fast path answers is what commander's path answers: the task, a refusal, --json error bodies, check's statuses", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "one", "--id", "t1", "--scope", "src/a.ts"], { cwd: repo, agent: "lead" }).code, 0);
  assert.is(cli(["claim", "t1"], { cwd: repo, agent: "holder" }).code, 0);
  assert.is(cli(["lease", "src/b.ts", "--exclusive"], { cwd: repo, agent: "holder" }).code, 0);
  // One clock for both runs of a line: "(in 30m)" reads the same.
  const env = { HANDOFF_NOW: new Date().toISOString() };
  const lines = [
    ["task", "show", "t1"],
    ["task", "show", "t1", "--json"],
    ["task", "show", "nope"],
    ["task", "show", "nope", "--json"],
    ["task", "show", "bad id!"],
    ["check", "src/a.ts"],
    ["check", "src/a.ts", "--json"],
    ["check", "src/b.ts", "--json"],
    ["check", "../outside.ts"],
    ["check", "../outside.ts", "--json"],
    ["claim", "t1", "--next"],
    ["claim", "t1", "--ttl", "soon", "--json"],
    ["claim", "nope"],
    ["task", "list"],
    ["task", "list", "--status", "bogus", "--json"],
    ["tasks", "--complete", "t"],
    ["task", "add", "again", "--id", "t1"],
  ];
  const codes: number[] = [];
  for (const line of lines) {
    assert.ok(fastLine(FAST_VERBS, line), `${known(line)} is read fast`);
    // A word before the verb (the program's -C, naming where it runs anyway) sends the line to commander.
    const viaCommander = cli(["-C", repo, ...line], { cwd: repo, agent: "a2", env });
    const fast = cli(line, { cwd: repo, agent: "a2", env });
    assert.equal([fast.code, fast.stdout, fast.stderr], [viaCommander.code, viaCommander.stdout, viaCommander.stderr], known(line));
    codes.push(fast.code);
  }
  assert.equal(codes, [0, 0, 4, 4, 2, 0, 0, 3, 2, 2, 2, 2, 4, 0, 2, 0, 3], "the statuses themselves");
});

test.run();
