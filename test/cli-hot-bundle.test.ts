// The hot verbs (claim, check, task ...) are served by a smaller bundle (hot-main.ts) built by the
// same code from the same register functions as the full CLI: its table must match program.ts's,
// the dispatcher must load it for those verbs only, and what they print must not change.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ALL_VERBS, HOT_VERBS, REMOTE_VERBS, VIEW_VERBS } from "../src/cli/command-line.ts";
import { HOT_TABLE } from "../src/cli/hot-program.ts";
import { REMOTE_TABLE } from "../src/cli/remote-main.ts";
import { VIEW_TABLE } from "../src/cli/view-main.ts";
import { VERBS } from "../src/cli/program.ts";
import type { Register } from "../src/cli/program-builder.ts";
import { CLI, cleanEnv, cleanupTemp, cli, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

/** A bundle's table is program.ts's entries for exactly its verbs, the same functions, in program.ts's order. */
function matchesProgram(table: [Register, string[]][], verbs: readonly string[]): void {
  const fromProgram = VERBS.filter(([, names]) => names.some((n) => verbs.includes(n)));
  assert.equal(table.map(([r, names]) => [r.name, names]), fromProgram.map(([r, names]) => [r.name, names]));
  table.forEach(([r], i) => assert.is(r, fromProgram[i]![0]));
  assert.equal(table.flatMap(([, names]) => names), [...verbs]);
}

test("the hot table is program.ts's entries for exactly the hot verbs, in its order", () => matchesProgram(HOT_TABLE, HOT_VERBS));

test("the dispatcher's list of every verb is program.ts's, in its order", () => {
  assert.equal([...ALL_VERBS], VERBS.flatMap(([, names]) => names));
});

test("the remote bundle's table is program.ts's entries for exactly the remote verbs, in its order", () => matchesProgram(REMOTE_TABLE, REMOTE_VERBS));

test("the views' bundle's table is program.ts's entries for exactly the view verbs, in its order", () => matchesProgram(VIEW_TABLE, VIEW_VERBS));

/** The bundles a command loaded, by the code cache files it left in a private cache folder. */
function bundlesOf(repo: string, args: string[]): { code: number; bundles: string[]; stdout: string } {
  const cache = tempDir("handoff-cache-");
  const r = cli(args, { cwd: repo, agent: "claude-1", env: { XDG_CACHE_HOME: cache } });
  const bundles = (existsSync(`${cache}/git-handoff`) ? readdirSync(`${cache}/git-handoff`) : []).map((f) => f.replace(/-[0-9a-f]{8}-\d+-\d+-v[\d.]+-[a-z-]+\.cache$/, ""));
  return { code: r.code, bundles, stdout: r.stdout };
}

test("claim, check and task show load the hot bundle, wait and sync the remote one, the views theirs; other verbs and help the full CLI; --version none", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "work", "--id", "t1", "--scope", "src/a.ts"], { cwd: repo, agent: "lead" }).code, 0);
  // A plain line of a hot verb reads none of the lazy groups' code (hot-main-lazy-*.cjs: commander among them).
  for (const args of [["claim", "t1"], ["check", "src/a.ts"], ["task", "show", "t1"]]) {
    const r = bundlesOf(repo, args);
    assert.is(r.code, 0, args.join(" "));
    assert.equal(r.bundles, ["hot-main.cjs"], args.join(" "));
  }
  for (const args of [["--agent", "x", "leases"], ["claim", "--help"]]) {
    const r = bundlesOf(repo, args);
    assert.is(r.code, 0, args.join(" "));
    assert.ok(r.bundles.includes("hot-main.cjs") && r.bundles.includes("hot-main-lazy-commander.cjs"), `${args.join(" ")}: ${r.bundles}`);
    for (const b of r.bundles) assert.match(b, /^hot-main(-lazy-\w+)?\.cjs$/, args.join(" "));
  }
  // wait and sync (a waiter's start-up is on a handover's round trip) have a bundle of their own.
  // (Exit codes: wait --timeout ran out 8; sync in a clone without a sync remote 4, not found.)
  for (const [args, code] of [[["wait", "--id", "t1", "--timeout", "1ms"], 8], [["wait", "--help"], 0], [["sync"], 4], [["sync-conflicts"], 0]] as [string[], number][]) {
    const r = bundlesOf(repo, args);
    assert.is(r.code, code, `${args.join(" ")}: ${r.code}`);
    assert.equal(r.bundles, ["remote-main.cjs"], args.join(" "));
  }
  // The views over the whole history: events, status and stats.
  for (const args of [["status"], ["events", "--agent", "lead", "--limit", "5"], ["stats", "--json"], ["status", "--help"]]) {
    const r = bundlesOf(repo, args);
    assert.is(r.code, 0, args.join(" "));
    assert.equal(r.bundles, ["view-main.cjs"], args.join(" "));
  }
  for (const args of [["help", "claim"], ["help", "status"], ["--version", "--json"], ["agents"]]) {
    const r = bundlesOf(repo, args);
    assert.is(r.code, 0, args.join(" "));
    assert.equal(r.bundles, ["cli-main.cjs"], args.join(" "));
  }
  // --version alone is answered by the dispatcher: what commander prints, no bundle loaded.
  const full = bundlesOf(repo, ["-C", repo, "--version"]);
  assert.equal(full.bundles, ["cli-main.cjs"]);
  for (const flag of ["--version", "-V"]) {
    const r = bundlesOf(repo, [flag]);
    assert.is(r.code, 0, flag);
    assert.equal(r.bundles, [], flag);
    assert.is(r.stdout, full.stdout, flag);
    assert.match(r.stdout, /^git-handoff \d+\.\d+\.\d+( \([0-9a-f]+(-dirty)?\))?\n$/);
  }
});

test("what a view prints is what the full CLI prints: help through either, and the same figures", () => {
  const repo = tempRepo();
  const env = { HANDOFF_NOW: "2026-11-30T10:00:00.000Z" };
  assert.is(cli(["task", "add", "work", "--id", "t1", "--scope", "src/a.ts"], { cwd: repo, agent: "lead", env }).code, 0);
  assert.is(cli(["claim", "t1"], { cwd: repo, agent: "claude-1", env }).code, 0);
  for (const verb of ["events", "status", "stats"]) {
    // `help <verb>` goes through the full CLI, `<verb> --help` through the views' bundle.
    assert.is(cli([verb, "--help"], { cwd: repo }).stdout, cli(["help", verb], { cwd: repo }).stdout, verb);
  }
  const status = cli(["status", "--json"], { cwd: repo, agent: "claude-2", env });
  assert.is(status.code, 0, status.stderr);
  assert.equal(status.json.counts, { todo: 0, claimed: 1, done: 0, failed: 0, cancelled: 0, review: 0 });
  const events = cli(["events", "--task", "t1", "--json"], { cwd: repo, agent: "claude-2", env });
  // The claim's scope lease is an event about t1 too (kept on the lease ref).
  assert.equal(events.json.map((e: { type: string }) => e.type).sort(), ["claimed", "created", "leased"]);
  assert.is(cli(["stats", "--json"], { cwd: repo, agent: "claude-2", env }).json.claims.granted, 1);
});

test("what a hot verb prints is what the full CLI prints", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "work", "--id", "t1", "--scope", "src/a.ts"], { cwd: repo, agent: "lead" }).code, 0);
  const env = { HANDOFF_NOW: "2026-11-30T10:00:00.000Z" };
  assert.is(cli(["claim", "t1"], { cwd: repo, agent: "claude-1", env }).code, 0);
  const hot = cli(["task", "show", "t1"], { cwd: repo, agent: "claude-2", env });
  // `help task show` goes through the full CLI; its help text must equal the hot bundle's.
  assert.is(cli(["task", "show", "--help"], { cwd: repo }).stdout, cli(["help", "task", "show"], { cwd: repo }).stdout);
  assert.is(hot.code, 0);
  assert.match(hot.stdout, /t1\s+claimed/);
  const check = cli(["check", "src/a.ts", "--json"], { cwd: repo, agent: "claude-2", env });
  assert.is(check.json.verdict, "warn");
  assert.is(check.json.paths[0].holders[0].agent, "claude-1");
});

test("the bundles the dispatcher loads are one function expression each, in ASCII (read as latin1), and run without a code cache too", () => {
  const dist = dirname(CLI);
  const lazyFiles = readdirSync(dist).filter((f) => /^hot-main-lazy-\w+\.cjs$/.test(f));
  assert.ok(lazyFiles.includes("hot-main-lazy-commander.cjs"), "hot-main.cjs's lazy groups are files beside it");
  for (const f of ["cli-main.cjs", "hot-main.cjs", ...lazyFiles, "remote-main.cjs", "view-main.cjs", "hook-main.cjs", "mcp-main.cjs", "dashboard-main.cjs"]) {
    const text = readFileSync(join(dist, f), "utf8");
    assert.ok(text.startsWith("(function (exports, require, module, __filename, __dirname) {\n"), `${f} starts with the module wrapper`);
    assert.ok(text.endsWith("\n})\n"), `${f} ends it`);
    assert.not.match(text, /[^\x00-\x7f]/, `${f} is ASCII`);
  }
  const repo = tempRepo();
  assert.is(cli(["task", "add", "work", "--id", "t1"], { cwd: repo, agent: "lead" }).code, 0);
  for (const env of [{ HANDOFF_NO_CODE_CACHE: "1" }, { XDG_CACHE_HOME: join(tempDir(), "a-file")}]) {
    if (env.XDG_CACHE_HOME) writeFileSync(env.XDG_CACHE_HOME, "not a folder");
    const r = cli(["task", "show", "t1"], { cwd: repo, agent: "lead", env });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /^t1 {2}todo/);
    // A line left to commander reads the lazy groups' file without a cache as well.
    const json = cli(["--json", "task", "show", "t1"], { cwd: repo, agent: "lead", env });
    assert.is(json.code, 0, json.stderr);
    assert.is(json.json.id, "t1");
    assert.match(cli(["--version"], { cwd: repo, agent: "lead", env }).stdout, /^git-handoff \d+\.\d+\.\d+/);
  }
});

test("a verb that names an Object property is an unknown verb, not a crash", () => {
  const repo = tempRepo();
  for (const verb of ["constructor", "__proto__", "toString"]) {
    const r = cli([verb], { cwd: repo });
    assert.is(r.code, 2, `${verb}: ${r.stderr}`);
    assert.match(r.stderr, /unknown command/);
  }
});

/**
 * For the tests that read when a cache is written: no run counts as long (over a second, which a
 * loaded machine reaches with any command), or its cache would be provisional and written again.
 */
const NEVER_LONG = { HANDOFF_CODE_CACHE_LONG_MS: String(10 * 60_000) };

test("a code cache that is empty, foreign or cut short is passed over and written anew; the command runs as with none", () => {
  const repo = tempRepo();
  const cache = tempDir("handoff-cache-");
  const run = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: repo, env: cleanEnv({ XDG_CACHE_HOME: cache, HANDOFF_AGENT: "lead", ...NEVER_LONG }), encoding: "utf8" });
  assert.is(run(["task", "add", "work", "--id", "t1"]).status, 0);
  assert.is(run(["task", "show", "t1"]).status, 0);
  const file = join(cache, "git-handoff", readdirSync(join(cache, "git-handoff")).find((f) => f.startsWith("hot-main.cjs-") && f.endsWith("-task-show.cache"))!);
  // Longer than the bundle itself too: the bundle and its cache share one buffer as they are read.
  for (const bad of [Buffer.alloc(0), Buffer.from("not a code cache"), readFileSync(file).subarray(0, statSync(file).size >> 1), Buffer.alloc(statSync(join(dirname(CLI), "hot-main.cjs")).size * 2, 7)]) {
    writeFileSync(file, bad);
    const r = run(["task", "show", "t1"]);
    assert.is(r.status, 0, r.stderr);
    assert.match(r.stdout, /^t1 {2}todo/);
    const anew = readFileSync(file);
    assert.ok(anew.length > 1000 && !anew.equals(bad), "written anew");
    // And the new one is taken as it is: the next run leaves it unchanged.
    const at = statSync(file).mtimeMs;
    assert.is(run(["task", "show", "t1"]).status, 0);
    assert.is(statSync(file).mtimeMs, at);
  }
});

test("a HOME that is not there is not made for the code cache; one that is gets .cache/git-handoff", () => {
  const repo = tempRepo();
  const home = join(tempDir(), "home");
  const run = () => spawnSync(process.execPath, [CLI, "task", "list"], { cwd: repo, env: cleanEnv({ HOME: home, XDG_CACHE_HOME: "", HANDOFF_AGENT: "lead" }), encoding: "utf8" });
  const missing = run();
  assert.is(missing.status, 0, missing.stderr);
  assert.not.ok(existsSync(home), `${home} was made: ${existsSync(home) ? readdirSync(home, { recursive: true }).join(", ") : ""}`);
  mkdirSync(home);
  assert.is(run().status, 0);
  assert.ok(readdirSync(join(home, ".cache", "git-handoff")).some((f) => f.endsWith("-task-list.cache")), "the cache written under the home");
});

test("two installs of one build keep their code caches side by side: neither prunes the other's", () => {
  const repo = tempRepo();
  const cache = tempDir("handoff-cache-");
  const other = tempDir("handoff-other-install-");
  cpSync(dirname(CLI), other, { recursive: true });
  const run = (cliPath: string) => spawnSync(process.execPath, [cliPath, "help"], { cwd: repo, env: cleanEnv({ XDG_CACHE_HOME: cache }), encoding: "utf8" });
  assert.is(run(CLI).status, 0);
  assert.is(run(join(other, basename(CLI))).status, 0);
  assert.is(run(CLI).status, 0);
  const files = readdirSync(`${cache}/git-handoff`).filter((f) => f.startsWith("cli-main.cjs-"));
  assert.is(files.length, 2, files.join(", "));
});

test("each verb keeps a code cache of its own, written once; a new build of the bundle drops every verb's cache of the old one", () => {
  const repo = tempRepo();
  const cache = tempDir("handoff-cache-");
  const install = tempDir("handoff-install-");
  cpSync(dirname(CLI), install, { recursive: true });
  const cliPath = join(install, basename(CLI));
  const run = (args: string[]) => spawnSync(process.execPath, [cliPath, ...args], { cwd: repo, env: cleanEnv({ XDG_CACHE_HOME: cache, HANDOFF_AGENT: "claude-1", ...NEVER_LONG }), encoding: "utf8" });
  const hot = () => readdirSync(`${cache}/git-handoff`).filter((f) => f.startsWith("hot-main.cjs-")).sort();
  const variant = (f: string) => f.slice(f.indexOf(`-${process.version}-`) + process.version.length + 2);
  assert.is(run(["task", "add", "work", "--id", "t1"]).status, 0);
  assert.is(run(["claim", "t1"]).status, 0);
  assert.equal(hot().map(variant), ["claim.cache", "task-add.cache"]);
  const claimCache = `${cache}/git-handoff/${hot().find((f) => f.endsWith("-claim.cache"))}`;
  const written = statSync(claimCache).mtimeMs;
  assert.is(run(["release", "t1"]).status, 0);
  assert.is(run(["claim", "t1"]).status, 0);
  assert.equal(hot().map(variant), ["claim.cache", "release.cache", "task-add.cache"]);
  // task's subcommands keep theirs apart too: show's code is not in add's cache.
  assert.is(run(["task", "show", "t1"]).status, 0);
  assert.equal(hot().map(variant), ["claim.cache", "release.cache", "task-add.cache", "task-show.cache"]);
  assert.is(statSync(claimCache).mtimeMs, written, "a verb's cache is written by its first run only");
  // A word that is no verb shares one cache ("any"): typos must not each leave a file.
  for (const typo of ["frobnicate", "claimm"]) assert.is(run([typo]).status, 2);
  assert.equal(readdirSync(`${cache}/git-handoff`).filter((f) => f.startsWith("cli-main.cjs-")).map(variant), ["any.cache"]);
  // A new build (another size or mtime): its first run drops the old build's caches of every verb.
  const later = new Date(Date.now() + 60_000);
  utimesSync(join(install, "hot-main.cjs"), later, later);
  assert.is(run(["task", "show", "t1"]).status, 0);
  const left = hot();
  assert.is(left.length, 1, left.join(", "));
  assert.match(left[0]!, /-task-show\.cache$/);
});

test("a long run leaves its verb a provisional code cache (read-only to its owner), which the next run that is not long writes anew", () => {
  const repo = tempRepo();
  const cache = tempDir("handoff-cache-");
  // HANDOFF_CODE_CACHE_LONG_MS=1: every run counts as long (a run past the bound drops the bytecode of what it ran first).
  const run = (args: string[], long: boolean) => spawnSync(process.execPath, [CLI, ...args], { cwd: repo, env: cleanEnv({ XDG_CACHE_HOME: cache, HANDOFF_AGENT: "lead", ...(long ? { HANDOFF_CODE_CACHE_LONG_MS: "1" } : NEVER_LONG) }), encoding: "utf8" });
  assert.is(run(["task", "add", "work", "--id", "t1"], false).status, 0);
  const r = run(["task", "show", "t1"], true);
  assert.is(r.status, 0, r.stderr);
  const file = () => join(cache, "git-handoff", readdirSync(join(cache, "git-handoff")).find((f) => f.startsWith("hot-main.cjs-") && f.endsWith("-task-show.cache"))!);
  assert.is(statSync(file()).mode & 0o777, 0o400, "a long run's cache is provisional");
  // Another long run takes it as it is and leaves it.
  const at = statSync(file()).mtimeMs;
  assert.is(run(["task", "show", "t1"], true).status, 0);
  assert.is(statSync(file()).mtimeMs, at);
  assert.is(statSync(file()).mode & 0o777, 0o400);
  // A run that is not long writes it anew, for good: the run after leaves it unchanged.
  const shown = run(["task", "show", "t1"], false);
  assert.is(shown.status, 0, shown.stderr);
  assert.match(shown.stdout, /^t1 {2}todo/);
  assert.is(statSync(file()).mode & 0o777, 0o600, "replaced by an ordinary run's");
  const written = statSync(file()).mtimeMs;
  assert.is(run(["task", "show", "t1"], false).status, 0);
  assert.is(statSync(file()).mtimeMs, written);
});

test.run();
