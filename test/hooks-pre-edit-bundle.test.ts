// An agent's pre-edit hook runs before every edit, so the dispatcher loads a bundle holding only
// that hook (src/hooks/pre-edit-main.ts) instead of the one serving every hook (hook-main.ts):
// each agent's pre-edit hook must go to it and every other hook to hook-main, and its answers,
// what it writes and what it tells the agent after the check (the drift notice, a release
// request) must be those of hook-main, which serves the same hook with the other hooks' code.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, cleanEnv, cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";
import { storeLease, storeSession } from "./support/seed.ts";

test.after(cleanupTemp);

const FIXTURES = resolve(import.meta.dirname, "../fixtures/hooks");
const NOW = "2026-11-30T10:00:00.000Z";

/** The bundles a command loaded, by the code cache files it left in a private cache folder. */
function bundlesOf(repo: string, args: string[], input: string): { code: number; bundles: string[]; stderr: string } {
  const cache = tempDir("handoff-cache-");
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: repo, env: cleanEnv({ HANDOFF_AGENT: "bob", XDG_CACHE_HOME: cache }), input, encoding: "utf8" });
  const bundles = (existsSync(`${cache}/git-handoff`) ? readdirSync(`${cache}/git-handoff`) : []).map((f) => f.replace(/-[0-9a-f]{8}-\d+-\d+-v[\d.]+-[a-z-]+\.cache$/, ""));
  return { code: r.status ?? 1, bundles: bundles.sort(), stderr: r.stderr };
}

test("each agent's pre-edit hook loads the pre-edit bundle, however the command line names it; every other hook the hook bundle", () => {
  const repo = tempRepo();
  // `{}` is no edit: each pre-edit hook answers nothing, and no catch writer starts.
  for (const args of [
    ["hook", "claude-pre-tool-use"],
    ["hook", "codex-pre-tool-use"],
    ["hook", "cursor-pre-tool-use"],
    ["hook", "gemini-before-tool"],
    ["-C", repo, "--agent", "bob", "hook", "claude-pre-tool-use"],
    ["hook", "--agent", "bob", "claude-pre-tool-use", "-C", "."],
    ["hook", "--agent=bob", "gemini-before-tool"],
  ]) {
    const r = bundlesOf(repo, args, "{}");
    assert.is(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
    // The bundle, and the files of lazy groups its answer used (scripts/lazy-file.mjs), if any.
    assert.equal(r.bundles.filter((b) => !/^pre-edit-main-lazy-\w+\.cjs$/.test(b)), ["pre-edit-main.cjs"], args.join(" "));
  }
  for (const [args, code] of [
    [["hook", "claude-session-start"], 0],
    [["hook", "gemini-after-tool"], 0],
    [["hook", "pre-commit"], 0],
    [["hook", "toString"], 2],
    [["hook", "--agent", "claude-pre-tool-use", "claude-session-start"], 0],
  ] as [string[], number][]) {
    const r = bundlesOf(repo, args, "{}");
    assert.is(r.code, code, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(r.bundles, ["hook-main.cjs"], args.join(" "));
  }
  assert.equal(bundlesOf(repo, ["hook", "claude-pre-tool-use", "--help"], "").bundles, ["cli-main.cjs"]);
  // What it is for: none of the other hooks' code (the build keeps function names).
  const pre = readFileSync(join(dirname(CLI), "pre-edit-main.cjs"), "latin1");
  const full = readFileSync(join(dirname(CLI), "hook-main.cjs"), "latin1");
  for (const name of ["sessionContext", "preCommit", "prePush", "registerSession", "afterToolAnswer", "writePendingCatches"]) {
    assert.match(full, new RegExp(`function ${name}\\(`), name);
    assert.not.match(pre, new RegExp(`function ${name}\\(`), name);
  }
});

/**
 * Runs dist/hook-main.cjs itself (as the dispatcher's loader does), with the hook's command line
 * and the dispatcher as the process's script (the catch writer it starts runs that).
 */
function viaHookMain(repo: string, args: string[], input: string, env: NodeJS.ProcessEnv) {
  const main = join(dirname(CLI), "hook-main.cjs");
  const load =
    'const f = process.argv[2]; process.argv.splice(1, 2, process.argv[1]); const fn = require("node:vm").runInThisContext(require("node:fs").readFileSync(f, "latin1"), { filename: f });' +
    'const m = { exports: {} }; fn(m.exports, require("node:module").createRequire(f), m, f, require("node:path").dirname(f)); m.exports.run(process.argv.slice(2));';
  return spawnSync(process.execPath, ["-e", load, CLI, main, ...args], { cwd: repo, env, input, encoding: "utf8" });
}

function viaDispatcher(repo: string, args: string[], input: string, env: NodeJS.ProcessEnv) {
  return spawnSync(process.execPath, [CLI, ...args], { cwd: repo, env, input, encoding: "utf8" });
}

/** What a repository's handoff state says after the edits: the leases and the events, as the CLI prints them. */
function stateOf(repo: string): string {
  const env = { HANDOFF_NOW: NOW };
  const leases = cli(["leases", "--json"], { cwd: repo, agent: "carol", env }).stdout;
  const events = cli(["events", "--json"], { cwd: repo, agent: "carol", env }).json.map((e: { type: string; agent: string; paths?: string[] }) => [e.type, e.agent, e.paths]);
  return `${leases}\n${JSON.stringify(events)}`;
}

test("the pre-edit bundle answers every kind of edit as the hook bundle does, and leaves the same state", async () => {
  const a = tempRepo();
  const alice = { cwd: a, agent: "alice", now: NOW };
  await storeLease(alice, ["src/api/**"], { exclusive: true, reason: "API rewrite" });
  await storeLease(alice, ["src/shared.ts"]);
  await storeLease(alice, ["docs/**"]);
  // bob declares lib/**: an edit outside it gets the drift notice; alice asks him for lib/a.ts.
  await storeSession({ cwd: a, agent: "bob", now: NOW }, "the library", { files: ["lib/**"] });
  assert.is(cli(["lease", "lib/a.ts"], { cwd: a, agent: "bob", env: { HANDOFF_NOW: NOW } }).code, 0);
  assert.is(cli(["ask", "bob", "--release", "lib/a.ts", "--reason", "typo fix"], { cwd: a, agent: "alice", env: { HANDOFF_NOW: NOW } }).code, 0);
  const b = join(tempDir(), "copy");
  cpSync(a, b, { recursive: true });

  const claude = (repo: string, file: string) => JSON.stringify({ session_id: "s-bob", hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { file_path: join(repo, file), content: "x\n" }, cwd: repo });
  const bash = (repo: string, command: string) => JSON.stringify({ session_id: "s-bob", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command }, cwd: repo });
  const fixture = (name: string) => (repo: string) => readFileSync(`${FIXTURES}/${name}`, "utf8").replaceAll("__REPO__", repo);
  const edits: [string, (repo: string) => string, RegExp][] = [
    ["claude-pre-tool-use", (r) => claude(r, "src/api/users.ts"), /"permissionDecision":"deny".*held by alice.*reason: API rewrite/],
    // The warning, the drift notice (src/ is outside bob's lib/**) and alice's request, in one answer.
    ["claude-pre-tool-use", (r) => claude(r, "src/shared.ts"), /warn: src\/shared\.ts is leased by alice.*outside.*lib\/\*\*.*typo fix/],
    ["claude-pre-tool-use", (r) => claude(r, "docs/guide.md"), /info: docs\/guide\.md is inside docs\/\*\*, leased by alice/],
    ["claude-pre-tool-use", (r) => claude(r, "lib/b.ts"), /^$/],
    ["claude-pre-tool-use", (r) => bash(r, "sed -i s/a/b/ src/api/users.ts"), /src\/api\/users\.ts/],
    ["codex-pre-tool-use", fixture("codex-pre-tool-use.apply-patch.json"), /deny/],
    ["cursor-pre-tool-use", fixture("cursor-pre-tool-use.write.json"), /"permission":"deny"/],
    ["gemini-before-tool", fixture("gemini-before-tool.write-file.json"), /"decision":"deny"/],
  ];
  const env = cleanEnv({ HANDOFF_AGENT: "bob", HANDOFF_NOW: NOW, HANDOFF_HOOK_CATCH_WAIT: "1" });
  for (const [name, payload, expected] of edits) {
    const pre = viaDispatcher(a, ["hook", name], payload(a), env);
    const full = viaHookMain(b, ["hook", name], payload(b), env);
    const what = `${name} ${payload(a).slice(0, 160)}`;
    assert.is(pre.status, full.status, what);
    // The copy's records still name the first repository as where alice and bob work.
    const same = (text: string) => text.replaceAll(b, "<repo>").replaceAll(a, "<repo>");
    assert.is(same(pre.stdout), same(full.stdout), what);
    assert.is(same(pre.stderr), same(full.stderr), what);
    assert.match(pre.stdout.trim(), expected, `${what}: ${pre.stdout}`);
  }
  assert.is(stateOf(a), stateOf(b));
  assert.match(stateOf(a), /hook_caught.*undeclared_edit|undeclared_edit.*hook_caught/);
  assert.is(gitOut(a, "for-each-ref", "--format=%(refname)", "refs/handoff"), gitOut(b, "for-each-ref", "--format=%(refname)", "refs/handoff"));
});

/**
 * A `--require` script that writes, when the answer is written (the first write to fd 1), what stdin
 * was, whether zod was set up, the size of the file `watched` (-1: none), and the builtins loaded, to `out`.
 */
function answerProbe(watched = ""): { probe: string; out: string } {
  const dir = tempDir();
  const out = join(dir, "modules.txt");
  const probe = join(dir, "probe.cjs");
  writeFileSync(
    probe,
    `const fs = require("fs"); const socket = fs.fstatSync(0).isSocket(); let seen = false;
// The answer's first write to fd 1, by writeSync or writevSync (hooks/write-out.ts writes by the latter first).
for (const name of ["writeSync", "writevSync"]) {
  const write = fs[name];
  fs[name] = function (fd, ...rest) {
    if (fd === 1 && !seen) (seen = true), fs.writeFileSync(${JSON.stringify(out)}, [socket ? "stdin is a socket" : "", globalThis.__zod_globalConfig ? "zod is set up" : "", "watched " + (fs.statSync(${JSON.stringify(watched)}, { throwIfNoEntry: false })?.size ?? -1), ...process.moduleLoadList].join("\\n"));
    return write.call(this, fd, ...rest);
  };
}\n`,
  );
  return { probe, out };
}

// What the answer needs is set up before it and the rest after (or never): Node starts with a young
// generation of 1 MB, and a hook that fills it with module-level objects has it collected (~1 ms)
// before the answer. So the payload on a socket (what an agent written in Node hands its hooks) is
// read without net or the stream modules, and zod, which the answer never parses with, is set up
// on first use only (scripts/build.mjs).
test("a pre-edit answer is written before net, the stream modules or zod are set up, its payload on a socket", async () => {
  const repo = tempRepo();
  await storeLease({ cwd: repo, agent: "alice" }, ["src/shared.ts"]);
  await storeLease({ cwd: repo, agent: "alice" }, ["src/api/**"], { exclusive: true });
  const { probe, out } = answerProbe();
  const payload = (file: string) => JSON.stringify({ hook_event_name: "preToolUse", workspace_roots: [repo], tool_name: "Write", tool_input: { file_path: join(repo, file), contents: "x\n" } });
  const env = cleanEnv({ HANDOFF_AGENT: "bob", HANDOFF_HOOK_CATCH_WAIT: "1" });
  for (const [file, answer] of [
    ["src/free.ts", /^\{"permission":"allow"\}$/],
    ["src/shared.ts", /"permission":"allow".*src\/shared\.ts is leased by alice/],
    ["src/api/users.ts", /"permission":"deny".*exclusive lease on src\/api\/\*\* held by alice/],
  ] as [string, RegExp][]) {
    // The first edit of a file leases it for bob, which may start git (and with it net): not this question.
    assert.is(spawnSync(process.execPath, [CLI, "hook", "cursor-pre-tool-use"], { cwd: repo, env, input: payload(file) }).status, 0);
    const r = spawnSync(process.execPath, ["--require", probe, CLI, "hook", "cursor-pre-tool-use"], { cwd: repo, env, input: payload(file), encoding: "utf8" });
    assert.is(r.status, 0, r.stderr);
    assert.is(r.stderr, "");
    assert.match(r.stdout.trim(), answer, file);
    const loaded = readFileSync(out, "utf8").split("\n");
    assert.ok(loaded.includes("stdin is a socket"));
    assert.not.ok(loaded.includes("zod is set up"), `${file}: zod is not set up by the answer`);
    for (const m of ["net", "stream"]) assert.not.ok(loaded.includes(`NativeModule ${m}`), `${file}: ${m} is not loaded by the answer: ${loaded.join(" ")}`);
  }
  // Read so, a socket is no reason for a warning, even where Node warns of everything deprecated.
  const pending = spawnSync(process.execPath, [CLI, "hook", "cursor-pre-tool-use"], { cwd: repo, env: { ...env, NODE_OPTIONS: "--pending-deprecation" }, input: payload("src/free.ts"), encoding: "utf8" });
  assert.equal([pending.status, pending.stdout.trim(), pending.stderr], [0, '{"permission":"allow"}', ""]);
});

// The log index (store/log-index.ts) is behind the agents' log refs when another process wrote to one
// and did not index it (a catch writer not done yet, a sync that brought other clones' logs): the
// answer then reads the new commits for release requests. Most are hook catches, which it skips
// by their type, before any validation: zod was set up for them, ~10 ms before the answer. The
// index it brought up to date is written after the answer.
test("a pre-edit answer that reads log commits the index lacks sets up no zod for the catches among them, and writes the index after", async () => {
  const repo = tempRepo();
  await storeLease({ cwd: repo, agent: "alice" }, ["src/shared.ts"]);
  const index = join(repo, ".git/handoff/log-index.json");
  const { probe, out } = answerProbe(index);
  const input = JSON.stringify({ hook_event_name: "preToolUse", workspace_roots: [repo], tool_name: "Write", tool_input: { file_path: join(repo, "src/shared.ts"), contents: "x\n" } });
  const env = cleanEnv({ HANDOFF_AGENT: "bob", HANDOFF_HOOK_CATCH_WAIT: "1", HANDOFF_NOW: NOW });
  // Two warned edits: bob's log holds their catches.
  for (let i = 0; i < 2; i++) assert.is(spawnSync(process.execPath, [CLI, "hook", "cursor-pre-tool-use"], { cwd: repo, env, input }).status, 0);
  assert.match(gitOut(repo, "log", "--format=%B", "refs/handoff/log/bob"), /"type": "hook_caught"/);
  // An index that knows nothing yet: every commit of bob's log is read.
  writeFileSync(index, "");
  const r = spawnSync(process.execPath, ["--require", probe, CLI, "hook", "cursor-pre-tool-use"], { cwd: repo, env, input, encoding: "utf8" });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout.trim(), /"permission":"allow".*src\/shared\.ts is leased by alice/);
  const atAnswer = readFileSync(out, "utf8").split("\n");
  assert.not.ok(atAnswer.includes("zod is set up"), "zod is not set up by the answer");
  assert.ok(atAnswer.includes("watched 0"), `the index is written after the answer: ${atAnswer.slice(0, 3).join(" | ")}`);
  // A free file leaves no catch whose writer would index the log: the hook itself wrote it.
  writeFileSync(index, "");
  const free = input.replace("src/shared.ts", "src/free.ts");
  assert.equal(spawnSync(process.execPath, [CLI, "hook", "cursor-pre-tool-use"], { cwd: repo, env, input: free, encoding: "utf8" }).stdout.trim(), '{"permission":"allow"}');
  assert.match(readFileSync(index, "utf8"), new RegExp(`"refs/handoff/log/bob":\\{"tip":"${gitOut(repo, "rev-parse", "refs/handoff/log/bob").trim()}"`));
});

// A code cache holds what the runs that wrote it compiled (cli/code-cache.ts). The pre-edit hook's
// answers take different paths through its code: under a cache its first denial left, every
// warned edit and free file compiled the drift notice and the deliveries again (~1.5 ms), and
// under one a free file left every denial compiled its own rendering (~0.3 ms). A run that takes a
// path its cache's runs have not writes it again at exit, once per path.
test("the pre-edit hook's code cache is written again by a run whose answer took a path new to it, once a path", async () => {
  const repo = tempRepo();
  await storeLease({ cwd: repo, agent: "alice" }, ["src/shared.ts"]);
  await storeLease({ cwd: repo, agent: "alice" }, ["src/api/**"], { exclusive: true });
  const cache = tempDir("handoff-cache-");
  const env = cleanEnv({ HANDOFF_AGENT: "bob", XDG_CACHE_HOME: cache, HANDOFF_HOOK_CATCH_WAIT: "1", HANDOFF_NOW: NOW });
  const payload = (file: string) => JSON.stringify({ hook_event_name: "preToolUse", workspace_roots: [repo], tool_name: "Write", tool_input: { file_path: join(repo, file), contents: "x\n" } });
  /** The pre-edit bundle's cache after an edit of `file`: its identity (changed when written again), size, and the paths noted beside it. */
  const edit = (file: string) => {
    const r = spawnSync(process.execPath, [CLI, "hook", "cursor-pre-tool-use"], { cwd: repo, env, input: payload(file), encoding: "utf8" });
    assert.is(r.status, 0, r.stderr);
    const dir = `${cache}/git-handoff`;
    const name = readdirSync(dir).find((f) => f.startsWith("pre-edit-main.cjs-") && f.endsWith(".cache"))!;
    const st = statSync(join(dir, name), { bigint: true });
    return { id: `${st.ino}:${st.mtimeNs}`, size: Number(st.size), paths: readFileSync(join(dir, `${name}.paths`), "utf8") };
  };
  const denied = edit("src/api/users.ts");
  assert.is(denied.paths, "1");
  assert.is(edit("src/api/users.ts").id, denied.id, "a second denial leaves the cache as it was");
  const warned = edit("src/shared.ts");
  assert.is(warned.paths, "3");
  assert.is.not(warned.id, denied.id, "the first warning writes it again");
  assert.ok(warned.size > denied.size, `with the warning's code besides the denial's (${denied.size} -> ${warned.size} bytes)`);
  assert.is(edit("src/shared.ts").id, warned.id, "a second warning leaves it as it was");
  assert.is(edit("src/api/users.ts").id, warned.id, "so does a denial now");
  assert.is(edit("src/free.ts").paths, "7");
});

test.run();
