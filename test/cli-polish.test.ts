// The polish of a real tool, tried as a user would: --push/--offline only where a verb writes,
// suggested commands quoted for the shell, ages that never go negative, aligned event columns,
// and progress on a terminal.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { buildProgram } from "../src/cli/program.ts";
import { formatAgo, formatUntil } from "../src/core/duration.ts";
import { handoffCommand, shellQuote, shellUnquote } from "../src/core/shell-quote.ts";
import { suggestionText } from "../src/present/suggestions.ts";
import { cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";
import { cliOnTerminal } from "./support/pty.ts";
import { cloneOf, serveRoot } from "./support/servers.ts";

test.after(cleanupTemp);

function leaves(c: Command, prefix: string[] = []): Map<string, Command> {
  const out = new Map<string, Command>();
  for (const sub of c.commands) {
    const path = [...prefix, sub.name()];
    out.set(path.join(" "), sub);
    for (const [k, v] of leaves(sub, path)) out.set(k, v);
  }
  return out;
}
const takesPush = (c: Command) => c.options.some((o) => o.long === "--push") && c.options.some((o) => o.long === "--offline");

test("--push and --offline are offered by the verbs that write, and only by them", () => {
  const all = leaves(buildProgram());
  const writes = ["task add", "claim", "renew", "release", "done", "fail", "reclaim", "cancel", "lease", "unlease", "depend", "undepend", "ready", "handoff", "ack", "review accept", "review reject", "session start", "session end", "heartbeat", "gc", "memory add", "memory edit", "memory rm", "doc put", "approve", "wait", "worker", "compact"];
  const reads = ["status", "events", "tasks", "task show", "task list", "leases", "check", "agents", "inbox", "stats", "conflicts", "doctor", "memory list", "memory show", "doc get", "doc list", "doc log", "review", "fence-check", "mcp-config", "dashboard"];
  for (const v of writes) {
    assert.ok(all.has(v), `no verb ${v}`);
    assert.ok(takesPush(all.get(v)!), `${v} writes: it should take --push/--offline`);
  }
  for (const v of reads) {
    assert.ok(all.has(v), `no verb ${v}`);
    assert.not.ok(all.get(v)!.options.some((o) => o.long === "--push" || o.long === "--offline"), `${v} only reads: no --push/--offline`);
  }
});

test("help status lists no --push, help claim does; status --push is a usage error", () => {
  const repo = tempRepo();
  const status = cli(["help", "status"], { cwd: repo });
  assert.is(status.code, 0, status.stderr);
  assert.match(status.stdout, /^Usage: git-handoff status/);
  assert.not.match(status.stdout, /--push|--offline/);
  const claim = cli(["help", "claim"], { cwd: repo });
  assert.match(claim.stdout, /--push\b/);
  assert.match(claim.stdout, /--offline\b/);
  const bad = cli(["status", "--push"], { cwd: repo });
  assert.is(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /unknown option '--push'/);
  // Before the verb it is still the program's option, so scripts that set it globally keep working.
  assert.is(cli(["--push", "status"], { cwd: repo }).code, 0);
});

test("shellQuote leaves plain words alone and quotes the rest so a shell passes them through", () => {
  for (const plain of ["api", "alice@host.wt", "src/a.ts", "api#1", "--agent"]) assert.is(shellQuote(plain), plain);
  assert.is(shellQuote("src/api/**"), "'src/api/**'");
  assert.is(shellQuote("a b"), "'a b'");
  assert.is(shellQuote("#x"), "'#x'");
  assert.is(shellQuote(""), "''");
  assert.is(shellQuote("it's"), `'it'\\''s'`);
  for (const w of ["src/api/**", "it's", "a b", "", "x'y'z", "$HOME", "a;b"]) assert.is(shellUnquote(shellQuote(w)), w);
  assert.is(handoffCommand("unlease", "src/*.ts", "--agent", "bob"), "git handoff unlease 'src/*.ts' --agent bob");
  // MCP clients get the value itself, not the shell's quoting of it.
  assert.is(suggestionText(`run: ${handoffCommand("unlease", "src/it's/**")}`, "mcp"), 'run: release_files {"paths": ["src/it\'s/**"]}');
});

test("a deny from check on a glob lease suggests the unlease command quoted for the shell", () => {
  const repo = tempRepo();
  const lease = cli(["lease", "--exclusive", "src/api/**"], { cwd: repo, agent: "bob" });
  assert.is(lease.code, 0, lease.stderr);
  const r = cli(["check", "src/api/x.ts"], { cwd: repo, agent: "alice" });
  assert.match(r.stdout, /^deny /m);
  assert.ok(r.stdout.includes("git handoff ask bob --release 'src/api/**'"), r.stdout);
  assert.not.ok(r.stdout.includes("--release src/api/**"), r.stdout);
  const j = cli(["check", "src/api/x.ts", "--json"], { cwd: repo, agent: "alice" });
  assert.ok(JSON.stringify(j.json).includes(`git handoff ask bob --release 'src/api/**'`));
});

test("ages never go negative: a heartbeat in the future says clock skew, under a second is just now", () => {
  const repo = tempRepo();
  const at = (iso: string) => ({ HANDOFF_NOW: iso });
  assert.is(cli(["session", "start", "--objective", "api"], { cwd: repo, agent: "bob", env: at("2026-12-01T12:00:00Z") }).code, 0);
  const behind = cli(["agents"], { cwd: repo, env: at("2026-12-01T11:00:00Z") });
  assert.is(behind.code, 0, behind.stderr);
  assert.match(behind.stdout, /^bob .* in the future: clock skew\? /m);
  assert.not.match(behind.stdout, /-\d+\w* ago|ms ago/);
  assert.match(cli(["agents"], { cwd: repo, env: at("2026-12-01T12:00:00.300Z") }).stdout, /^bob .* just now /m);
  assert.match(cli(["agents"], { cwd: repo, env: at("2026-12-01T12:03:00Z") }).stdout, /^bob .* 3m ago /m);
  // Expiries read the same way on both sides of now.
  assert.is(formatUntil(30 * 60_000), "in 30m");
  assert.is(formatUntil(0), "just now");
  assert.is(formatUntil(-180_000), "3m ago");
  assert.is(formatAgo(0), "just now");
  assert.is(formatAgo(-8 * 86_400_000), "in the future: clock skew?");
});

test("events: time, type, task and agent columns line up however long the values", () => {
  const repo = tempRepo();
  const ok = (args: string[], agent: string) => assert.is(cli(args, { cwd: repo, agent }).code, 0, args.join(" "));
  ok(["task", "add", "write the api", "--id", "api"], "bob-the-builder");
  ok(["claim", "api"], "bob-the-builder");
  ok(["session", "start", "--objective", "docs"], "al");
  ok(["task", "add", "a longer one", "--id", "a-much-longer-task-id"], "al");
  ok(["depend", "api", "--on", "a-much-longer-task-id"], "al");
  const r = cli(["events"], { cwd: repo });
  assert.is(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split("\n");
  assert.ok(lines.length >= 5, r.stdout);
  const types = lines.map((l) => l.split(/\s+/)[1]!);
  assert.ok(types.some((t) => t.length > 9), `a type longer than 9 characters: ${types.join(" ")}`);
  const starts = (l: string) => [...l.matchAll(/\S+/g)].slice(0, 4).map((m) => m.index);
  for (const l of lines) assert.equal(starts(l), starts(lines[0]!), `columns drift:\n${r.stdout}`);
});

// A command that waits for the file `go` finishes only if `mark` reached the terminal while it ran.
const onTerminal = (args: string[], o: { cwd: string; agent: string; mark: string; go: string }) =>
  cliOnTerminal(args, { cwd: o.cwd, agent: o.agent, prompt: o.mark, touch: o.go });

test("done: the verification's output reaches a terminal while it runs, and stays off a pipe", () => {
  const repo = tempRepo();
  const go = join(tempDir(), "go");
  assert.is(cli(["task", "add", "write the api", "--id", "api"], { cwd: repo, agent: "alice" }).code, 0);
  assert.is(cli(["claim", "api"], { cwd: repo, agent: "alice" }).code, 0);
  // Waits (at most 60 s) for the driver to see its first line: it passes only if that line was streamed.
  const verify = `echo verify-started; i=0; while [ ! -f '${go}' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; test -f '${go}' && echo verify-finished`;
  const r = onTerminal(["done", "api", "--verify", verify], { cwd: repo, agent: "alice", mark: "verify-started", go });
  assert.is(r.code, 0, r.output);
  assert.ok(existsSync(go));
  assert.match(r.output, /verify-started\n(.|\n)*verify-finished\n(.|\n)*api is in review/);

  assert.is(cli(["task", "add", "write the notes", "--id", "notes"], { cwd: repo, agent: "alice" }).code, 0);
  assert.is(cli(["claim", "notes"], { cwd: repo, agent: "alice" }).code, 0);
  const piped = cli(["done", "notes", "--verify", "echo quiet-verification"], { cwd: repo, agent: "alice" });
  assert.is(piped.code, 0, piped.stderr);
  assert.not.match(piped.stderr, /quiet-verification/);
});

test("sync says what it does on a terminal (fetching, pushing N refs), and nothing extra on a pipe", () => {
  const served = serveRoot();
  const bare = served.bare("polish");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const a = cloneOf(bare);
  assert.is(cli(["task", "add", "ship it", "--id", "ship"], { cwd: a, agent: "lead" }).code, 0);
  const go = join(tempDir(), "go");
  const r = onTerminal(["sync"], { cwd: a, agent: "lead", mark: "never-printed", go });
  assert.is(r.code, 0, r.output);
  assert.match(r.output, /git-handoff: fetching refs\/handoff\/\* from origin\n/);
  assert.match(r.output, /git-handoff: pushing 1 ref\(s\) to origin\n/);
  const again = cli(["sync"], { cwd: a, agent: "lead" });
  assert.is(again.code, 0, again.stderr);
  assert.not.match(again.stderr, /fetching|pushing|nothing to push/);
  assert.match(onTerminal(["sync"], { cwd: a, agent: "lead", mark: "never-printed", go }).output, /git-handoff: nothing to push to origin\n/);
});

test("init --agents chooses which agent configs it writes, and says of each step done / already done / needs you", () => {
  const repo = tempRepo();
  const snapshotRefs = gitOut(repo, "for-each-ref");
  const bad = cli(["init", "--agents", "claude,bogus"], { cwd: repo });
  assert.is(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /--agents takes a comma-separated list of claude, codex, cursor, gemini/);
  assert.not.ok(existsSync(join(repo, ".claude")), "a bad --agents writes nothing");
  assert.is(gitOut(repo, "for-each-ref"), snapshotRefs);

  // A dry run labels each step as the other lines are labelled, and writes nothing.
  const dry = cli(["init", "--agents", "claude,codex", "--dry-run"], { cwd: repo });
  assert.match(dry.stdout, /^would do: +Claude Code: configure git-handoff hooks in \.claude\/settings\.json$/m);
  assert.match(dry.stdout, /^would do: +install the git pre-commit hook$/m);
  assert.not.match(dry.stdout, /^would [A-Z]/m);
  assert.not.ok(existsSync(join(repo, ".claude")), "a dry run writes nothing");

  const first = cli(["init", "--agents", "claude,codex"], { cwd: repo });
  assert.is(first.code, 0, first.stderr);
  assert.ok(existsSync(join(repo, ".claude/settings.json")) && existsSync(join(repo, ".codex/hooks.json")));
  assert.not.ok(existsSync(join(repo, ".cursor/hooks.json")) || existsSync(join(repo, ".gemini/settings.json")), "only the agents asked for");
  assert.match(first.stdout, /^done: +install the git pre-commit hook$/m);
  assert.match(first.stdout, /^done: +Claude Code: configure git-handoff hooks in \.claude\/settings\.json$/m);
  assert.match(first.stdout, /^needs you: +commit \.claude\/settings\.json \.codex\/hooks\.json so linked worktrees/m);

  const again = cli(["init", "--agents", "claude,codex", "--json"], { cwd: repo });
  assert.equal(again.json.agents, ["claude", "codex"]);
  assert.equal(again.json.actions.filter((a: { op: string }) => a.op !== "note"), []);
  assert.ok(again.json.already.includes("the git pre-commit hook"), JSON.stringify(again.json.already));
  const rerun = cli(["init", "--agents", "claude,codex"], { cwd: repo }).stdout;
  assert.match(rerun, /^already done: +Codex: git-handoff hooks in \.codex\/hooks\.json$/m);
  // Still not committed: a second init says so again (text and --json).
  assert.match(rerun, /^needs you: +commit \.claude\/settings\.json \.codex\/hooks\.json so linked worktrees/m);
  assert.ok(again.json.actions.some((a: { detail: string; needs_you?: boolean }) => a.needs_you && /^commit \.claude\/settings\.json \.codex\/hooks\.json /.test(a.detail)), JSON.stringify(again.json.actions));
  gitOut(repo, "add", ".claude/settings.json", ".codex/hooks.json");
  gitOut(repo, "commit", "-q", "-m", "agent hooks");
  assert.not.match(cli(["init", "--agents", "claude,codex"], { cwd: repo }).stdout, /needs you: +commit/, "committed: nothing to ask");

  const husky = tempRepo();
  mkdirSync(join(husky, ".husky/_"), { recursive: true });
  gitOut(husky, "config", "core.hooksPath", ".husky/_");
  const h = cli(["init", "--agents", "cursor"], { cwd: husky });
  assert.match(h.stdout, /^needs you: +husky manages git hooks here; add this line to \.husky\/pre-commit:\ngit-handoff hook pre-commit$/m);
  assert.not.ok(existsSync(join(husky, ".gemini/settings.json")));
});

test.run();
