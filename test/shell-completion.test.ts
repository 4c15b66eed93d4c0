// Shell completion as a user meets it: the scripts `git handoff completion bash|zsh|fish` prints,
// loaded in the real shells in a repository with tasks, complete verbs, options, task ids and agent
// names (read when TAB is pressed) and the fixed values. The ids come from `task list --complete`
// and `agents --complete`, which answer at once, bounded, and write nothing.
import { spawnSync } from "node:child_process";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { TASK_STATUSES } from "../src/core/task.ts";
import { HOOK_NAMES } from "../src/hooks/hook-names.ts";
import { fishQuote } from "../src/cli/completion-words.ts";
import { CLI, cleanEnv, cleanupTemp, cli, gitOut, handoffRefs, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const STATUSES = [...TASK_STATUSES, "blocked"];

/** A repository with tasks api-users, api-docs and db-schema, and agent bob with a session. */
function repoWithTasks(): string {
  const repo = tempRepo();
  for (const id of ["api-users", "api-docs", "db-schema"]) assert.is(cli(["task", "add", `work on ${id}`, "--id", id], { cwd: repo, agent: "lead" }).code, 0);
  assert.is(cli(["session", "start", "--objective", "review"], { cwd: repo, agent: "bob" }).code, 0);
  return repo;
}

/** The shells run `git-handoff` from PATH, as a user's would: a folder holding it, first on PATH. */
function pathWithCli(): string {
  const bin = tempDir("handoff-bin-");
  writeFileSync(join(bin, "git-handoff"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(join(bin, "git-handoff"), 0o755);
  return `${bin}:${process.env.PATH}`;
}

const scripts = new Map<string, string>();
const script = (shell: string) => {
  if (!scripts.has(shell)) {
    const r = cli(["completion", shell], { cwd: tempDir() });
    assert.is(r.code, 0, r.stderr);
    scripts.set(shell, r.stdout);
  }
  return scripts.get(shell)!;
};

/** One repository with tasks for the shells' tests, which only read it. */
let shared: string | undefined;
const sharedRepo = () => (shared ??= repoWithTasks());

/** Whether `shell` is installed here (where it is not, its script is checked as text only). */
const installed = (shell: string) => !spawnSync(shell, ["-c", "exit 0"]).error;

test("task list --complete and agents --complete: the ids starting with a prefix, bounded, from ref names alone, writing nothing", () => {
  const repo = repoWithTasks();
  const ids = (args: string[], env = {}) => {
    const r = cli(args, { cwd: repo, agent: "bob", env });
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stderr, "");
    return r.stdout.split("\n").filter(Boolean);
  };
  assert.equal(ids(["task", "list", "--complete", "api"]), ["api-docs", "api-users"]);
  assert.equal(ids(["tasks", "--complete", ""]), ["api-docs", "api-users", "db-schema"]);
  assert.equal(ids(["agents", "--complete", "b"]), ["bob"]);
  // 250 more task refs (names only are read, so they may point anywhere): at most 200 are printed.
  const head = gitOut(repo, "rev-parse", "HEAD");
  const updates = Array.from({ length: 250 }, (_, i) => `create refs/handoff/tasks/bulk-${String(i).padStart(3, "0")} ${head}\n`).join("");
  const r = spawnSync("git", ["update-ref", "--stdin"], { cwd: repo, input: updates, env: cleanEnv() });
  assert.is(r.status, 0, String(r.stderr));
  assert.is(ids(["tasks", "--complete", "bulk-"]).length, 200);
  assert.equal(ids(["tasks", "--complete", "bulk-24"]), Array.from({ length: 10 }, (_, i) => `bulk-24${i}`));
  // A day later bob's heartbeat is due: any command of his would write it; a TAB must not.
  const before = handoffRefs(repo, { logs: true });
  const later = { HANDOFF_NOW: new Date(Date.now() + 86_400_000).toISOString() };
  ids(["task", "list", "--complete", "api"], later);
  ids(["agents", "--complete", ""], later);
  assert.is(handoffRefs(repo, { logs: true }), before);
  assert.not.match(cli(["task", "list", "--help"], { cwd: repo }).stdout, /--complete/, "hidden: for the scripts only");
  const outside = cli(["task", "list", "--complete", "a"], { cwd: tempDir() });
  assert.ok(outside.code !== 0);
  assert.is(outside.stdout, "");
});

/** Completes each command line with the bash script, in one bash: COMPREPLY for each, in order. */
function bashComplete(cwd: string, lines: string[][]): string[][] {
  const calls = lines.map((words) => {
    const fn = words[0] === "git" ? "_git_handoff" : "_git_handoff_cmd";
    const quoted = words.map((w) => `'${w}'`).join(" ");
    return `COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; COMPREPLY=(); ${fn}; printf '%s\\n' "\${COMPREPLY[@]}" '<END>'`;
  });
  const r = spawnSync("bash", ["--norc", "-c", `eval "$(cat)"\n${calls.join("\n")}`], { cwd, input: script("bash"), encoding: "utf8", env: cleanEnv({ PATH: pathWithCli() }) });
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stderr, "", "nothing on the terminal while completing");
  return r.stdout.split("<END>\n").slice(0, -1).map((s) => s.split("\n").filter(Boolean));
}

test("bash: verbs, sub-verbs, options, task ids, agent names and fixed values, for git-handoff and `git handoff`", () => {
  const repo = sharedRepo();
  const cases: [string[], string[]][] = [
    [["git-handoff", "cla"], ["claim"]],
    [["git", "handoff", "cla"], ["claim"]],
    [["git-handoff", "merge"], ["merge-preview"]],
    [["git-handoff", "task", ""], ["add", "show", "list"]],
    [["git-handoff", "memory", ""], ["add", "list", "show", "edit", "rm"]],
    [["git-handoff", "claim", "api"], ["api-docs", "api-users"]],
    [["git", "handoff", "claim", "api-u"], ["api-users"]],
    [["git-handoff", "task", "show", "ap"], ["api-docs", "api-users"]],
    [["git-handoff", "renew", ""], ["api-docs", "api-users", "db-schema"]],
    [["git-handoff", "--json", "done", "--note", "x", "db"], ["db-schema"]],
    [["git-handoff", "depend", "api-docs", "--on", "api-u"], ["api-users"]],
    [["git-handoff", "fence-check", "api-docs", "db"], ["db-schema"]],
    [["git-handoff", "review", "accept", "db"], ["db-schema"]],
    [["git-handoff", "task", "add", "--after", "db"], ["db-schema"]],
    [["git-handoff", "events", "--task", "db"], ["db-schema"]],
    [["git-handoff", "--agent", "b"], ["bob"]],
    [["git-handoff", "handoff", "api-docs", "--to", ""], ["bob"]],
    [["git-handoff", "tasks", "--status", ""], STATUSES],
    [["git-handoff", "agents", "--status", "st"], ["stale"]],
    [["git-handoff", "completion", ""], ["bash", "zsh", "fish"]],
    [["git-handoff", "hook", ""], HOOK_NAMES],
    [["git-handoff", "claim", "--n"], ["--next"]],
    [["git-handoff", "task", "show", "--"], ["--json", "--agent", "--help"]],
    [["git-handoff", "help", "ta"], ["task", "tasks"]],
    [["git-handoff", "help", "task", ""], ["add", "show", "list"]],
    [["git-handoff", "claim", "api-docs", ""], []], // claim takes one task
    [["git-handoff", "status", ""], []],
  ];
  const got = bashComplete(repo, cases.map(([words]) => words));
  cases.forEach(([words, want], i) => assert.equal(got[i], want, words.join(" ")));
  // Every verb once, `help` among them.
  const [verbs] = bashComplete(repo, [["git-handoff", ""]]);
  assert.equal(verbs!.length, new Set(verbs).size, "no verb twice");
  for (const v of ["version", "completion", "merge-preview", "tasks", "help"]) assert.ok(verbs!.includes(v), v);
  // -C names the repository; outside one, ids complete to nothing, silently.
  const outside = tempDir();
  assert.equal(bashComplete(outside, [["git-handoff", "-C", repo, "claim", "db"], ["git-handoff", "claim", ""]]), [["db-schema"], []]);
});

/**
 * zsh completion for real: an interactive zsh in a pseudo-terminal (zpty) presses TAB after each
 * line, then clears it; what compadd was given for each, in order.
 */
function zshComplete(cwd: string, lines: string[]): string[][] {
  const dir = tempDir("handoff-zsh-");
  writeFileSync(join(dir, "_git-handoff"), script("zsh"));
  const out = join(dir, "out");
  // compadd is wrapped to note what it adds; a function zsh runs after a completion (set again
  // before each: zsh empties the list once it ran) writes an end mark; ^U clears the line.
  const steps = lines.map(
    (line, i) => `zpty -w z "comppostfuncs=(__end)"
zpty -w -n z ${JSON.stringify(line)}$'\\t'
for t in {1..400}; do (( \${$(grep -c '<END>' ${out} 2>/dev/null):-0} > ${i} )) && break; sleep 0.05; done
zpty -w -n z $'\\C-u'`,
  );
  const driver = `zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PROMPT=''; fpath=(${dir} \\$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z 'compadd() { if (( \${@[(I)-[OAD]*]} )); then builtin compadd "$@"; return; fi; local -a h; builtin compadd -O h "$@"; print -l -- $h >> ${out}; builtin compadd "$@"; }'
zpty -w z "__end() { print '<END>' >> ${out}; }"
${steps.join("\n")}
zpty -d z`;
  const r = spawnSync("zsh", ["-f", "-c", driver], { cwd, encoding: "utf8", env: cleanEnv({ PATH: pathWithCli() }), timeout: 60_000 });
  assert.is(r.status, 0, r.stderr);
  const each = readFileSync(out, "utf8").split("<END>\n");
  assert.is(each.length, lines.length + 1, "zsh completed every line");
  return each.slice(0, -1).map((text) => [...new Set(text.split("\n").filter(Boolean))]);
}

test("zsh: options with descriptions, task ids, agent names and values (run in zsh when it is installed)", () => {
  const text = script("zsh");
  // The script itself, whether or not zsh is here: every verb's options with their descriptions,
  // apostrophes kept; groups described as themselves; values from the code's own lists.
  assert.match(text, /^#compdef git-handoff\n/);
  assert.ok(text.includes(`'--next[claim the best ready task: highest priority, then oldest]'`));
  assert.ok(text.includes(`'reclaim:force-release another agent'\\''s claim (logged)'`), "apostrophes kept");
  assert.ok(text.includes(`'task:add, show and list tasks'`), "a group has its own description");
  assert.ok(text.includes(`'1:id:__git_handoff_tasks'`), "claim's id completes task ids");
  assert.ok(text.includes(`:status:(${STATUSES.join(" ")})'`));
  assert.ok(text.includes(`'1:shell:(bash zsh fish)'`));
  assert.ok(text.includes(`'1:name:(${HOOK_NAMES.join(" ")})'`));
  assert.ok(text.includes("merge-preview"));
  if (!installed("zsh")) return; // zsh is not installed here: the text above is what is checked
  const file = join(tempDir("handoff-zsh-"), "_git-handoff");
  writeFileSync(file, text);
  const n = spawnSync("zsh", ["-n", file], { encoding: "utf8" });
  assert.is(n.status, 0, n.stderr);
  const [claim, show, status, agent, claimOptions, task] = zshComplete(sharedRepo(), [
    "git-handoff claim api",
    "git-handoff task show db",
    "git-handoff tasks --status ",
    "git-handoff --agent b",
    "git-handoff claim --",
    "git-handoff task ",
  ]);
  assert.equal(claim, ["api-docs", "api-users"]);
  assert.equal(show, ["db-schema"]);
  assert.equal(status, STATUSES);
  assert.equal(agent, ["bob"]);
  for (const o of ["--next", "--ttl", "--force", "--json", "--agent", "--help"]) assert.ok(claimOptions!.includes(o), o);
  assert.equal(task, ["add", "show", "list"]);
});

test("fish: verbs and options with descriptions, task ids, agent names and values (run in fish when it is installed)", () => {
  const text = script("fish");
  // The script itself, whether or not fish is here.
  assert.match(text, /^complete -c git-handoff -f$/m);
  assert.ok(text.includes(`-a reclaim -d 'force-release another agent\\'s claim (logged)'`), "apostrophes kept");
  assert.ok(text.includes(`-a task -d 'add, show and list tasks'`), "a group has its own description");
  assert.ok(text.includes(`-n '__git_handoff_options_at "claim"' -l next -d 'claim the best ready task: highest priority, then oldest'`));
  assert.ok(text.includes(`-n '__git_handoff_argument_at "claim" 0' -a '(__git_handoff_read task)'`), "claim's id completes task ids");
  assert.ok(text.includes(`-l status -x -a '${STATUSES.join(" ")}'`));
  if (!installed("fish")) return; // fish is not installed here: the text above is what is checked
  const dir = tempDir("handoff-fish-");
  writeFileSync(join(dir, "git-handoff.fish"), text);
  const n = spawnSync("fish", ["--no-config", "-n", join(dir, "git-handoff.fish")], { encoding: "utf8" });
  assert.is(n.status, 0, n.stderr);
  // Every line in one fish: `complete -C` prints "candidate<TAB>description" lines, then a mark.
  const lines = [
    "git-handoff claim api",
    "git-handoff depend api-docs --on db",
    "git-handoff --agent b",
    "git-handoff tasks --status ",
    "git-handoff completion ",
    "git-handoff recl",
    "git-handoff claim --",
    "git-handoff task ",
  ];
  const calls = lines.map((line) => `complete -C ${fishQuote(line)}; echo '<END>'`).join("\n");
  const r = spawnSync("fish", ["--no-config", "-c", `source ${dir}/git-handoff.fish\n${calls}`], { cwd: sharedRepo(), encoding: "utf8", env: cleanEnv({ PATH: pathWithCli() }) });
  assert.is(r.status, 0, r.stderr);
  const [claim, depend, agent, status, shells, reclaim, claimOptions, task] = r.stdout.split("<END>\n").map((o) => o.split("\n").filter(Boolean));
  const names = (got: string[] | undefined) => got!.map((l) => l.split("\t")[0]!);
  assert.equal(names(claim), ["api-docs", "api-users"]);
  assert.equal(names(depend), ["db-schema"]);
  assert.equal(names(agent), ["bob"]);
  assert.equal(names(status).sort(), [...STATUSES].sort());
  assert.equal(names(shells).sort(), ["bash", "fish", "zsh"]);
  assert.ok(reclaim!.includes("reclaim\tforce-release another agent's claim (logged)"));
  assert.ok(claimOptions!.includes("--next\tclaim the best ready task: highest priority, then oldest"));
  assert.equal(names(task), ["add", "list", "show"]);
});

test("every argument and option that takes a task id completes task ids (read from the definitions)", async () => {
  const { buildProgram } = await import("../src/cli/program.ts");
  const { completionTree, walkVerbs } = await import("../src/cli/completion-model.ts");
  const untagged: string[] = [];
  const taskIdArgs: string[] = [];
  for (const { path, verb } of walkVerbs(completionTree(buildProgram()))) {
    const at = path.join(" ");
    for (const a of verb.args) {
      if (a.completes === "task") taskIdArgs.push(at);
      // A task's id is named <task>, <tasks...> or (outside memories, where it is a memory's) <id>.
      else if (["task", "tasks"].includes(a.name) || (a.name === "id" && path[0] !== "memory")) untagged.push(`${at} <${a.name}>`);
    }
    for (const o of verb.options) if (["--task", "--on", "--after"].includes(o.long ?? "") && o.completes !== "task") untagged.push(`${at} ${o.long}`);
  }
  assert.equal(untagged, []);
  for (const verb of ["claim", "renew", "release", "done", "fail", "reclaim", "cancel", "task show", "depend", "undepend", "handoff", "review accept", "review reject", "approve", "fence-check"]) {
    assert.ok(taskIdArgs.includes(verb), verb);
  }
});

test("completion: an unknown shell is a usage error", () => {
  const bad = cli(["completion", "powershell"], { cwd: tempRepo() });
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /choose bash, zsh or fish/);
});

test.run();
