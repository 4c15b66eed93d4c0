// Runs the real agent clients (installed as pinned devDependencies) unattended against a scripted
// model on 127.0.0.1, in a real repository, with a private HOME. Anything the clients would send
// elsewhere goes to a dead local proxy, so no test reaches the network.
import { spawn } from "node:child_process";
import * as assert from "uvu/assert";
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { FAST_HOOK } from "../support/hook-runner.ts";
import { dirname, join, resolve } from "node:path";
import { codexHooksList } from "../../src/sync/doctor-agents.ts";
import { startModel, type ModelServer, type Turn } from "./model-server.ts";
import { CLI, cleanEnv, cli, gitOut, tempDir, tempRepo } from "../support/repo.ts";

const ROOT = resolve(import.meta.dirname, "../..");

export const CLIENTS = {
  claude: { pkg: "@anthropic-ai/claude-code", version: "2.1.197", bin: "claude" },
  codex: { pkg: "@openai/codex", version: "0.171.0", bin: "codex" },
  gemini: { pkg: "@google/gemini-cli", version: "0.61.0", bin: "gemini" },
} as const;
export type Client = keyof typeof CLIENTS;

/** The installed client's binary; a missing or wrong install fails the test with what to do. */
export function clientBin(client: Client): string {
  const c = CLIENTS[client];
  const bin = join(ROOT, "node_modules/.bin", c.bin);
  const manifest = join(ROOT, "node_modules", c.pkg, "package.json");
  if (!existsSync(bin) || !existsSync(manifest)) {
    throw new Error(`${c.pkg} ${c.version} is not installed (it is a devDependency): run npm ci. Its tests cannot run without it.`);
  }
  const have = JSON.parse(readFileSync(manifest, "utf8")).version;
  if (have !== c.version) throw new Error(`${c.pkg} is ${have}, the tests are written for ${c.version}: run npm ci`);
  return bin;
}

/** A folder holding `git-handoff` (the built CLI), put first on the clients' PATH as a user's install would be. */
let shimDir: string | null = null;
export function shims(): string {
  // Made again when gone: test files sharing one process each remove their temp folders after
  // their last test, the shim folder of an earlier file among them.
  if (shimDir && existsSync(join(shimDir, "git-handoff"))) return shimDir;
  shimDir = tempDir("handoff-bin-");
  const shim = join(shimDir, "git-handoff");
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(shim, 0o755);
  // The pre-edit hooks init writes run `git-handoff-hook`: the sh fast path, as the package installs it.
  symlinkSync(FAST_HOOK, join(shimDir, "git-handoff-hook"));
  return shimDir;
}

/** The environment every client runs in: private HOME, telemetry and updates off, local only. */
export function clientEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  mkdirSync(home, { recursive: true });
  return cleanEnv({
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_DATA_HOME: join(home, ".local/share"),
    PATH: `${shims()}:${process.env.PATH}`,
    // Anything not for 127.0.0.1 goes to a port where nothing listens.
    HTTP_PROXY: "http://127.0.0.1:9",
    HTTPS_PROXY: "http://127.0.0.1:9",
    http_proxy: "http://127.0.0.1:9",
    https_proxy: "http://127.0.0.1:9",
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    GEMINI_TELEMETRY_ENABLED: "false",
    GEMINI_CLI_NO_RELAUNCH: "true",
    NO_BROWSER: "true",
    CI: "1",
    TERM: "dumb",
    GIT_AUTHOR_NAME: "t",
    GIT_AUTHOR_EMAIL: "t@t",
    GIT_COMMITTER_NAME: "t",
    GIT_COMMITTER_EMAIL: "t@t",
    ...extra,
  });
}

export interface ClientRun {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a client to its end, bounded: a client that hangs is killed and the test fails. */
export function runClient(bin: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<ClientRun> {
  const started = Date.now();
  return new Promise((done, fail) => {
    const child = spawn(bin, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {}
      // The start too: what the first tool call answered is how a run that then loops began.
      const shown = (text: string) => (text.length > 5000 ? `${text.slice(0, 3000)}\n…\n${text.slice(-2000)}` : text);
      fail(new Error(`${bin} ${args.join(" ")} did not finish in ${timeoutMs} ms\nstdout: ${shown(stdout)}\nstderr: ${shown(stderr)}`));
    }, timeoutMs);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code: code ?? 1, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** Prints what a scenario cost, so the suite's output shows each client run's price. */
export function cost(client: Client, scenario: string, ms: number): void {
  process.stdout.write(`  [${client}] ${scenario}: ${(ms / 1000).toFixed(1)} s\n`);
}

export const newHome = () => tempDir("handoff-home-");

/**
 * A repository as the agent scenarios want it: `git handoff init --write` done and committed,
 * alice holding `locked.txt` exclusively and `shared.txt` shared, `free.txt` held by nobody.
 */
export function scenarioRepo(): string {
  const repo = tempRepo();
  mkdirSync(join(repo, "sub"), { recursive: true });
  for (const f of ["locked.txt", "shared.txt", "free.txt", "sub/deep.txt"]) writeFileSync(join(repo, f), `${f} line one\n`);
  // Declare by doing: an edit leases the file to the agent that made it, so a test sees the hook's agent name.
  writeFileSync(join(repo, ".handoff.yaml"), "auto_lease: true\n");
  const init = cli(["init", "--write"], { cwd: repo, agent: "lead" });
  if (init.code !== 0) throw new Error(`init failed: ${init.stderr}`);
  gitOut(repo, "add", "-A");
  gitOut(repo, "commit", "-qm", "files and agent settings", "--no-verify");
  for (const args of [["lease", "locked.txt", "--exclusive", "--reason", "rewriting it"], ["lease", "shared.txt"]]) {
    const r = cli(args, { cwd: repo, agent: "alice" });
    if (r.code !== 0) throw new Error(`${args.join(" ")} failed: ${r.stderr}`);
  }
  return repo;
}

/**
 * What scenarioRepo's SessionStart hook must have told bob before the model's first turn: his
 * name, his claim of docs, and alice's exclusive file.
 */
export function assertSessionStartContext(s: Scenario): void {
  const first = JSON.stringify(s.model.requests.find((r) => r.main)!.body);
  assert.match(first, /git-handoff: you are agent bob/);
  assert.match(first, /- docs: write the docs/);
  assert.match(first, /- locked\.txt: EXCLUSIVE, do not edit \(alice/);
}

/** The agent holding a file's leases (empty: none), as `git handoff leases --json` reports. */
export function holders(repo: string, path: string): string[] {
  const r = cli(["leases", "--json"], { cwd: repo });
  const list: any[] = Array.isArray(r.json) ? r.json : (r.json?.leases ?? []);
  return list.filter((l: any) => l.pattern === path).map((l: any) => l.agent).sort();
}

export interface Scenario {
  model: ModelServer;
  run: ClientRun;
  home: string;
}

/** Claude Code headless (`claude -p`), edits accepted as a user would in acceptEdits mode. */
export async function claude(cwd: string, turns: Turn[], o: { env?: NodeJS.ProcessEnv; args?: string[]; home?: string; trust?: string } = {}): Promise<Scenario> {
  const bin = clientBin("claude");
  const model = await startModel("anthropic", turns);
  const home = o.home ?? newHome();
  // The user accepted the folder's trust dialog once, as they do on a first interactive start;
  // until then Claude Code drops project permissions (MCP stays refused in -p mode).
  if (o.trust) writeFileSync(join(home, ".claude.json"), JSON.stringify({ projects: { [o.trust]: { hasTrustDialogAccepted: true } } }));
  try {
    const args = ["-p", "do the scripted work", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits", "--debug-file", join(home, "claude-debug.log"), ...(o.args ?? [])];
    const run = await runClient(bin, args, cwd, clientEnv(home, { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy", ...o.env }));
    if (run.code !== 0) throw new Error(`claude exited ${run.code}\n${run.stderr.slice(-3000)}\n${run.stdout.slice(-3000)}`);
    return { model, run, home };
  } finally {
    await model.stop();
  }
}

/**
 * Codex CLI (`codex exec`) with a provider pointing at the scripted model, the project trusted,
 * no sandbox (the container has none to give) and no approvals. `trustHooks: false` leaves the
 * hooks unapproved, as they are until a user approves them in /hooks.
 */
export async function codex(cwd: string, turns: Turn[], o: { env?: NodeJS.ProcessEnv; trustHooks?: boolean | "approved"; project?: string; config?: string; model?: string } = {}): Promise<Scenario> {
  const bin = clientBin("codex");
  const model = await startModel("openai", turns);
  const home = newHome();
  const codexHome = join(home, ".codex");
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(
    join(codexHome, "config.toml"),
    [
      // A slug Codex knows gets its apply_patch tool; MCP tools then hide behind tool_search.
      `model = "${o.model ?? "gpt-5.5"}"`,
      'model_provider = "scripted"',
      'approval_policy = "never"',
      'sandbox_mode = "danger-full-access"',
      "[model_providers.scripted]",
      'name = "scripted"',
      `base_url = "${model.url}/v1"`,
      'wire_api = "responses"',
      `[projects."${o.project ?? cwd}"]`,
      'trust_level = "trusted"',
      o.config ?? "",
    ].join("\n") + "\n",
  );
  const env = clientEnv(home, { CODEX_HOME: codexHome, OPENAI_API_KEY: "dummy", PATH: `${shims()}:${dirname(bin)}:${process.env.PATH}`, ...o.env });
  try {
    if (o.trustHooks === "approved") await approveCodexHooks(o.project ?? cwd, codexHome, env);
    const bypass = o.trustHooks === undefined || o.trustHooks === true;
    const args = ["exec", "--json", "--skip-git-repo-check", ...(bypass ? ["--dangerously-bypass-hook-trust"] : []), "do the scripted work"];
    const run = await runClient(bin, args, cwd, env);
    if (run.code !== 0) throw new Error(`codex exited ${run.code}\n${run.stderr.slice(-3000)}\n${run.stdout.slice(-3000)}`);
    return { model, run, home };
  } finally {
    await model.stop();
  }
}

/** What `git handoff doctor` needs to ask the Codex of a scenario's HOME about its hooks. */
export function codexEnv(home: string): NodeJS.ProcessEnv {
  return { HOME: home, CODEX_HOME: join(home, ".codex"), PATH: `${dirname(clientBin("codex"))}:${process.env.PATH}` };
}

/**
 * Approves the project's hooks as Codex's /hooks screen does: their current content hashes,
 * as `codex app-server` lists them, recorded under `hooks.state` in config.toml.
 */
export async function approveCodexHooks(project: string, codexHome: string, env: NodeJS.ProcessEnv): Promise<void> {
  const hooks = await codexHooksList(project, env);
  if (!hooks.length) throw new Error("codex app-server lists no hook to approve");
  const lines = hooks.flatMap((h) => [`[hooks.state."${h.key}"]`, `trusted_hash = "${h.currentHash}"`]);
  writeFileSync(join(codexHome, "config.toml"), readFileSync(join(codexHome, "config.toml"), "utf8") + lines.join("\n") + "\n");
}

/** A Codex patch replacing the first line of `file`, as its apply_patch tool takes it. */
export const patchOf = (file: string, from: string, to: string) => `*** Begin Patch\n*** Update File: ${file}\n@@\n-${from}\n+${to}\n*** End Patch\n`;

/**
 * Gemini CLI headless (`gemini -p`), tools auto-approved, API-key auth against the scripted
 * model. `trusted`: the folder is listed in trustedFolders.json, as the trust prompt leaves it
 * (an untrusted folder loads no project hooks).
 */
export async function gemini(cwd: string, turns: Turn[], o: { env?: NodeJS.ProcessEnv; trusted?: string[]; home?: string } = {}): Promise<Scenario> {
  const bin = clientBin("gemini");
  const model = await startModel("gemini", turns);
  const home = o.home ?? newHome();
  const dir = join(home, ".gemini");
  mkdirSync(dir, { recursive: true });
  const settingsFile = join(dir, "settings.json");
  const settings = existsSync(settingsFile) ? JSON.parse(readFileSync(settingsFile, "utf8")) : {};
  settings.security = { ...settings.security, auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: true } };
  settings.privacy = { usageStatisticsEnabled: false };
  settings.telemetry = { enabled: false };
  settings.general = { ...settings.general, disableAutoUpdate: true, disableUpdateNag: true };
  writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
  writeFileSync(join(dir, "trustedFolders.json"), JSON.stringify(Object.fromEntries((o.trusted ?? [cwd]).map((f) => [f, "TRUST_FOLDER"]))));
  try {
    const args = ["-p", "do the scripted work", "--output-format", "stream-json", "--approval-mode", "yolo"];
    const run = await runClient(bin, args, cwd, clientEnv(home, { GOOGLE_GEMINI_BASE_URL: model.url, GEMINI_API_KEY: "dummy", ...o.env }));
    if (run.code !== 0) throw new Error(`gemini exited ${run.code}\n${run.stderr.slice(-3000)}\n${run.stdout.slice(-3000)}`);
    return { model, run, home };
  } finally {
    await model.stop();
  }
}
