// Help where git users look, and the polish of a real tool: `git handoff` alone, `help <verb>`,
// `version`, parser errors under --json, a quiet end when the reader closes the pipe, and generated
// references that are current (shell completion: shell-completion.test.ts).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { generatedDocs } from "../scripts/generated-docs.ts";
import { CLI, cleanEnv, cleanupTemp, cli, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);
const ROOT = resolve(import.meta.dirname, "..");

test("git handoff alone: a short usage on stderr, exit 2 (the usage status)", () => {
  const r = cli([], { cwd: tempRepo() });
  assert.is(r.code, 2);
  assert.is(r.stdout, "");
  assert.match(r.stderr, /^usage: git handoff <verb> \[options\]/);
  assert.match(r.stderr, /git handoff help \[verb\]/);
});

test("help <verb> (and <verb> <sub>) shows usage with examples; an unknown verb is exit 2", () => {
  const repo = tempRepo();
  const claim = cli(["help", "claim"], { cwd: repo });
  assert.is(claim.code, 0, claim.stderr);
  assert.match(claim.stdout, /^Usage: git-handoff claim/);
  assert.match(claim.stdout, /Examples:\n {2}git handoff claim api\n/);
  const sub = cli(["help", "task", "add"], { cwd: repo });
  assert.match(sub.stdout, /^Usage: git-handoff task add/);
  assert.match(sub.stdout, /--scope 'src\/api\/\*\*'/, "globs in examples are quoted for the shell");
  const bad = cli(["help", "nosuch"], { cwd: repo });
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /^git-handoff: no verb "nosuch"/);
});

test("every verb's help carries examples", async () => {
  const { buildProgram } = await import("../src/cli/program.ts");
  const { runsItself } = await import("../src/cli/reference.ts");
  const { EXAMPLES } = await import("../src/cli/examples.ts");
  const missing: string[] = [];
  const walk = (c: { commands: readonly any[] }, prefix: string[]) => {
    for (const sub of c.commands) {
      const path = [...prefix, sub.name()];
      if (runsItself(sub) && !EXAMPLES[path.join(" ")]?.length) missing.push(path.join(" "));
      walk(sub, path);
    }
  };
  walk(buildProgram(), []);
  assert.equal(missing, [], "add them to src/cli/examples.ts");
});

test("the reference's usage line of each verb is its help's (aliases included: conflicts|merge-preview)", async () => {
  const { buildProgram } = await import("../src/cli/program.ts");
  const { verbs } = await import("../src/cli/reference.ts");
  const program = buildProgram();
  const differ: string[] = [];
  for (const v of verbs(program)) {
    let c: any = program;
    for (const word of v.path.split(" ")) c = c.commands.find((x: any) => x.name() === word);
    const help = (c.helpInformation() as string).split("\n")[0]!.replace(/^Usage: git-handoff /, "git handoff ");
    if (help !== v.usage) differ.push(`${v.usage} | help: ${help}`);
  }
  assert.equal(differ, []);
  assert.ok(verbs(program).some((v) => v.usage === "git handoff conflicts|merge-preview [options]"));
});

/** A command line's words as sh splits them: quotes, a comment from a word starting with #, nothing from a redirection on. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  const re = /\s*(?:'([^']*)'|"((?:[^"\\]|\\.)*)"|([^\s'"]+))/y;
  let word: string | null = null;
  for (let m: RegExpExecArray | null; (m = re.exec(line)); ) {
    if (/^\s/.test(m[0]) && word !== null) (words.push(word), (word = null));
    const part = m[1] ?? m[2]?.replace(/\\(.)/g, "$1") ?? m[3]!;
    if (word === null && m[3]?.startsWith("#")) break;
    if (word === null && m[3] && /^[<>|]/.test(m[3])) break;
    word = (word ?? "") + part;
  }
  if (word !== null) words.push(word);
  return words;
}

test("every example in the help is a command line the parser takes, for the verb it is listed under", async () => {
  const { buildProgram } = await import("../src/cli/program.ts");
  const { EXAMPLES } = await import("../src/cli/examples.ts");
  const { runsItself } = await import("../src/cli/reference.ts");
  assert.equal(shellWords("git handoff ack api#1 --x 'a b'\"c\" # note"), ["git", "handoff", "ack", "api#1", "--x", "a bc"]);
  const bad: string[] = [];
  for (const [path, lines] of Object.entries(EXAMPLES)) {
    for (const line of lines) {
      const words = shellWords(line.replace(/^mkdir -p \S+ && /, "")); // a folder made first
      while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? "")) words.shift(); // an environment variable for the command
      if (words[0] !== "git" || words[1] !== "handoff") {
        bad.push(`${line}: not a git handoff command line`);
        continue;
      }
      // Every verb's action replaced by a note of which one ran: the parser alone is tested.
      let ran: string | null = null;
      const quiet = (c: any, prefix: string[]): void => {
        c.exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} });
        for (const sub of c.commands) {
          const at = [...prefix, sub.name()];
          if (runsItself(sub)) sub.action(() => void (ran = at.join(" ")));
          sub._lifeCycleHooks = {}; // init's note after its action (mcp-register.ts) would print
          quiet(sub, at);
        }
      };
      const program = buildProgram();
      quiet(program, []);
      try {
        await program.parseAsync(words.slice(2), { from: "user" });
      } catch (e) {
        bad.push(`${line}: ${(e as Error).message}`);
        continue;
      }
      if (ran !== path) bad.push(`${line}: ran ${ran ?? "nothing"}, listed under ${path}`);
    }
  }
  assert.equal(bad, []);
});

test("hook --help and mcp --help (their own bundles) print what help hook / help mcp print: on stdout, exit 0", () => {
  const repo = tempRepo();
  for (const verb of ["hook", "mcp"]) {
    const viaHelp = cli(["help", verb], { cwd: repo });
    assert.is(viaHelp.code, 0, viaHelp.stderr);
    assert.match(viaHelp.stdout, new RegExp(`^Usage: git-handoff ${verb} `));
    for (const args of [[verb, "--help"], [verb, "-h"], ["-C", repo, verb, "--help"]]) {
      const r = cli(args, { cwd: repo });
      assert.is(r.code, 0, args.join(" "));
      assert.is(r.stderr, "", args.join(" "));
      assert.is(r.stdout, viaHelp.stdout, args.join(" "));
    }
  }
  const hook = cli(["hook", "--help"], { cwd: repo }).stdout.replace(/\s+/g, " ");
  assert.match(hook, /fails open \(with a warning\)/);
  assert.match(hook, /HANDOFF_HOOK_TIMEOUT_MS bounds it \(default 5000\)/);
  assert.match(cli(["hook", "claude-pre-tool-use", "--help"], { cwd: repo }).stdout, /^Usage: git-handoff hook /);
  const mcp = cli(["mcp", "--help"], { cwd: repo }).stdout;
  for (const option of ["--agent <name>", "--wait-max <duration>", "-C <dir>", "--json"]) assert.ok(mcp.includes(option), option);
  assert.match(mcp.replace(/\s+/g, " "), /load_context's agent argument/);
});

test("the help lists every hook the hook bundle runs", async () => {
  const { HOOK_NAMES } = await import("../src/hooks/hook-names.ts");
  const top = cli(["--help"], { cwd: tempRepo() }).stdout.replace(/\s+/g, " ");
  for (const name of HOOK_NAMES) assert.match(top, new RegExp(`[ :,]${name}([,.]|$| )`), name);
});

test("version: the build's identity in text and JSON (--json before or after the verb, or with --version); --version alone answers the same line", () => {
  const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;
  const repo = tempRepo();
  const r = cli(["version"], { cwd: repo });
  const line = /^git-handoff (\S+)(?: \(([0-9a-f]{12,64})(-dirty)?\))?\n$/.exec(r.stdout);
  assert.ok(line, r.stdout);
  assert.is(line![1], version);
  // Built from this checkout (npm test builds first): the commit is named. From a tarball it would not be.
  const top = spawnSync("git", ["-C", ROOT, "rev-parse", "--show-toplevel"], { encoding: "utf8", env: cleanEnv() });
  if (top.status === 0 && realpathSync(top.stdout.trim()) === realpathSync(ROOT)) assert.ok(line![2], `a build from a git checkout names its commit: ${r.stdout}`);
  const git = /^git version (\S+)/.exec(spawnSync("git", ["--version"], { encoding: "utf8" }).stdout)![1];
  const after = cli(["version", "--json"], { cwd: repo });
  assert.equal(after.json, { version, commit: line![2] ?? null, dirty: !!line![3], node: process.versions.node, git });
  for (const args of [["--json", "version"], ["--version", "--json"], ["--json", "-V"]]) {
    const same = cli(args, { cwd: repo });
    assert.is(same.code, 0, same.stderr);
    assert.is(same.stdout, after.stdout, args.join(" "));
  }
  for (const args of [["--version"], ["-V"], ["-C", repo, "--version"]]) assert.is(cli(args, { cwd: repo }).stdout, r.stdout, args.join(" "));
});

test("a parser error honours --json: the error body on stdout, exit 2", () => {
  const r = cli(["claim", "--bogus", "--json"], { cwd: tempRepo() });
  assert.is(r.code, 2);
  assert.is(r.json.error.code, "usage", "the command line itself is wrong");
  assert.match(r.json.error.message, /unknown option '--bogus'/);
  assert.is(r.json.error.suggestions[0].detail, "git handoff help claim shows how to use it");
  assert.is(r.stderr, "git-handoff: unknown option '--bogus' [usage]\n", "stderr has the one line any refusal has, with its code");
});

test("a reader that closes the pipe early ends the command quietly (no EPIPE trace)", async () => {
  const repo = tempRepo();
  const child = spawn(process.execPath, [CLI, "completion", "fish"], { cwd: repo, env: cleanEnv() });
  child.stdout.destroy(); // the reader is gone before the first write
  let err = "";
  child.stderr.on("data", (b) => (err += b));
  const code = await new Promise<number | null>((r) => child.on("close", r));
  assert.is(code, 0);
  assert.not.match(err, /EPIPE|Error/);
  const viaHead = spawnSync("sh", ["-c", `"${process.execPath}" "${CLI}" completion bash | head -1`], { cwd: repo, env: cleanEnv(), encoding: "utf8" });
  assert.is(viaHead.stderr, "");
});

test("--after takes one value per flag (repeatable), so the objective after it is not swallowed", () => {
  const repo = tempRepo();
  for (const id of ["api", "db"]) assert.is(cli(["task", "add", `task ${id}`, "--id", id], { cwd: repo, agent: "lead" }).code, 0);
  const r = cli(["task", "add", "--after", "api", "--after", "db", "Write", "the", "notes", "--id", "notes", "--json"], { cwd: repo, agent: "lead" });
  assert.is(r.code, 0, r.stderr);
  assert.is(r.json.objective, "Write the notes");
  assert.equal(r.json.after, ["api", "db"]);
});

test("the CLI reference, the man page and the MCP tool reference are generated and current", async () => {
  const stale: string[] = [];
  for (const [file, text] of Object.entries(await generatedDocs())) {
    const path = join(ROOT, file);
    if (!existsSync(path) || readFileSync(path, "utf8") !== text) stale.push(file);
  }
  assert.equal(stale, [], "run npm run docs and commit the result");
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  assert.equal(pkg.man, ["./man/git-handoff.1"], "npm installs the man page, so git handoff --help finds it");
  assert.ok(pkg.files.includes("man"));
  assert.ok(existsSync(join(ROOT, "LICENSE")));
});

test.run();
