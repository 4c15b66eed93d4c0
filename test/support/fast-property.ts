// Test support for the fast hook's property tests (hooks-fast-property-edits, -commits and
// -patterns, and hooks-fast-answers): random lease sets, policies and payloads, the fast path and
// the full hook run on the same input.
// The sh fast path against the full hook, on random input: lease sets (literal files and globs,
// exclusive and shared, live and expired, several agents, the caller's own leases with renewals
// due or not), policies (modes, auto_lease, a declared session) and payloads (every agent's edit
// and shell tools, relative and absolute paths, `..`, symlinks, paths outside the repository or
// inside .git, globs, odd encodings, JSON escapes, duplicate keys, broken JSON). Whenever the fast
// path answers itself, the full hook, run on the same input, must give exactly that answer and
// write nothing; its deny, warn and info answers must be the full hook's, byte for byte, at the same
// (scripted) time. Where the fast path hands over, the full hook answers: that is always right.
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as assert from "uvu/assert";
import type { Lease, LeaseSet } from "../../src/core/lease.ts";
import { HandoffError } from "../../src/core/errors.ts";
import { afterToolAnswer, editIntent, formatAnswer, type AgentKind } from "../../src/hooks/agents.ts";
import { checkEdit } from "../../src/hooks/edit-check.ts";
import { exactTest, refreshFastCache } from "../../src/hooks/fast-cache.ts";
import { parsePayload } from "../../src/hooks/stdin.ts";
import { mutateLeases } from "../../src/store/lease-store.ts";
import { openSyncedStore } from "../../src/sync/open.ts";
import { CLI, cleanEnv, cli, gitOut, tempDir, tempRepo } from "./repo.ts";
import { FAST_HOOK } from "./hook-runner.ts";
import { mulberry32 as rng } from "./rng.ts";

export const SEED = Number(process.env.PROPERTY_SEED ?? 20261201);
export const SCENARIOS = Number(process.env.PROPERTY_SCENARIOS ?? 6);
// 50 payloads a lease set: each one runs the sh fast path (a few short processes), and at 100 the
// file took 172 s of a full run on a 2-core machine where `node -e 0` takes 105-150 ms, twice the
// suite's budget per file; the seed is fixed, so a deeper run is PROPERTY_PAYLOADS=200 (or another
// PROPERTY_SEED), not a longer default.
const PAYLOADS = Number(process.env.PROPERTY_PAYLOADS ?? 50);

export const PATTERNS = [
  "src/**", "src/api/**", "src/a.ts", "src/api/users.ts", "lib/*.ts", "**/users.ts", "docs/**/*.md", "{src,lib}/b.md",
  "src/[ab].ts", "?.md", "lib/x.gen.ts", "pkg1/**/x.gen.ts", "src/*/users.ts", "docs/guide.md", "lib/**", "a.ts", "pkg1/**",
  "src/api/*.ts", "**/*.md", "dist/**", "lib/deep/**/b.md",
];
/** The patterns whose matches the fast path decides exactly (a literal, folder/**, folder/**\/name): it answers for these. */
const EXACT = PATTERNS.filter((p) => exactTest(p) !== null);
/** Files those leases cover. */
const HOT = ["src/a.ts", "src/api/users.ts", "docs/guide.md", "lib/x.gen.ts", "pkg1/deep/x.gen.ts", "a.ts", "src/users.ts", "lib/deep/users.ts", "pkg1/a.ts"];
const SEGMENTS = ["src", "api", "lib", "docs", "pkg1", "deep", "a.ts", "b.md", "users.ts", "x.gen.ts", "guide.md", "c.ts", "link"];
const ODD = [".git", "..", ".", "", "dist", "package-lock.json", "name with space.ts", "\u00e9.ts", "*.ts", "a\\b", "x?.md", "C:"];
const AGENTS = ["alice", "carol", "bob"];

type Rng = ReturnType<typeof rng>;

function randomRel(r: Rng): string {
  if (FOCUS && r.chance(0.6)) return r.pick(HOT);
  const n = 1 + r.int(4);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(r.chance(0.06) ? r.pick(ODD) : r.pick(SEGMENTS));
  return parts.join("/") + (r.chance(0.03) ? "/" : "");
}

/** Scenarios made for answers: others hold patterns the fast path decides, the caller edits without writing. */
let FOCUS = false;
/** Payloads aimed at the leases the fast path can name (the deny, warn and info test). */
export function setFocus(on: boolean): void {
  FOCUS = on;
}

/** Paths the caller's own live leases cover, per scenario: where auto_lease and a declaration let the fast path answer. */
let OWN: string[] = [];

function randomPath(r: Rng, repo: string): string {
  const rel = OWN.length && r.chance(0.35) ? r.pick(OWN) : r.chance(0.3) ? r.pick(HOT) : randomRel(r);
  const k = r.int(10);
  if (k < 5) return `${repo}/${rel}`;
  if (k < 8) return rel;
  if (k === 8) return r.pick([`./${rel}`, `../${rel}`, `${repo}/src/../${rel}`, `${repo}//${rel}`]);
  return r.pick(["/tmp/elsewhere/a.ts", `${repo}/outside-link/x.ts`, `${repo}/src/link/a.ts`, repo, `${repo}/.git/config`]);
}

function randomCommand(r: Rng, repo: string): string {
  const words = Array.from({ length: r.int(5) }, () =>
    r.pick([randomPath(r, repo), randomRel(r), "-la", "--watch", "$HOME/x", "a=b", "https://x.io/a.ts", "'src/a.ts'", "2>/dev/null", "README", "npm", '"src/with space.ts"', "'a b'/c.ts", "src\\ x/y.ts", '"it\'s"', '"src/open.ts', 'x"y"z.ts']),
  );
  const cmd = `${r.pick(["cat", "ls", "sed -i s/a/b/", "rm", "grep -n x", "npm test"])} ${words.join(r.pick([" ", " | ", " && ", "; "]))}`;
  if (r.chance(FOCUS ? 0.6 : 0.15)) {
    const run = r.pick(["apply_patch", "apply_patch", "\napplypatch", "cd src && apply_patch", "bash -lc 'apply_patch", "/usr/bin/apply_patch", "apply_patchy"]);
    const files = Array.from({ length: 1 + r.int(2) }, () => `*** ${r.pick(["Add File", "Update File", "Move to"])}: ${randomRel(r)}`).join("\n@@\n-a\n+b\n");
    return `${run} <<'EOF'\n*** Begin Patch\n${files}\n@@\n-a\n+b\n*** End Patch\nEOF`;
  }
  return cmd;
}

/** A hook name and a payload an agent could send (or almost: some are broken on purpose). */
function randomPayload(r: Rng, repo: string): { name: string; kind: AgentKind; text: string } {
  const kind = r.pick(["claude", "claude", "codex", "cursor", "gemini"] as const);
  const name = { claude: "claude-pre-tool-use", codex: "codex-pre-tool-use", cursor: "cursor-pre-tool-use", gemini: r.pick(["gemini-before-tool", "gemini-after-tool"]) }[kind];
  const tools = {
    claude: ["Edit", "Write", "MultiEdit", "NotebookEdit", "Bash", "Read"],
    codex: ["apply_patch", "Bash", "Edit", "exec_command", "Read"],
    cursor: ["Write", "Edit", "StrReplace", "delete_file", "Read"],
    gemini: ["write_file", "replace", "run_shell_command", "read_file"],
  }[kind];
  const tool = FOCUS ? r.pick(tools.filter((t) => !/Read|read_file/.test(t))) : r.pick(tools);
  let input: Record<string, unknown>;
  if (["Bash", "exec_command", "run_shell_command"].includes(tool)) input = { command: r.chance(0.1) ? [randomCommand(r, repo)] : randomCommand(r, repo) };
  else if (tool === "apply_patch") {
    const files = Array.from({ length: 1 + r.int(3) }, () => `*** ${r.pick(["Add File", "Update File", "Delete File", "Move to"])}: ${randomRel(r)}`);
    input = { command: ["apply_patch", `*** Begin Patch\n${files.join("\n@@\n-a\n+b\n")}\n*** End Patch\n`] };
  } else input = { [r.pick(["file_path", "file_path", "file_path", "path", "notebook_path", "absolute_path"])]: randomPath(r, repo), old_string: "a\nb", new_string: "\u00e9\t\"q\"" };
  if (r.chance(0.05)) input.file_path = r.pick([5, null, "", ["x"]]);
  const payload: Record<string, unknown> = { session_id: "s", hook_event_name: "PreToolUse", tool_name: tool, tool_input: input };
  if (kind === "cursor" && r.chance(0.5)) payload.workspace_roots = [repo];
  else if (r.chance(0.9)) payload.cwd = r.chance(0.9) ? repo : `${repo}/src`;
  if (r.chance(0.03)) payload.tool_input = [input];
  if (r.chance(0.03)) delete payload.tool_name;
  let text = JSON.stringify(payload, null, r.chance(0.2) ? 2 : undefined);
  const k = r.int(40);
  if (k === 0) text = text.replace(/\//g, "\\/");
  else if (k === 1) text = text.replace(/"file_path"/, '"file\\u005fpath"');
  else if (k === 2) text = text.replace(/src/, "\\u0073rc");
  else if (k === 3) text = text.slice(0, r.int(text.length));
  else if (k === 4) text = text.replace(/^\{/, `{"tool_input": {"file_path": "${repo}/src/api/users.ts"}, `);
  else if (k === 5) text = `\ufeff${text}`;
  else if (k === 6) text = `${text}\n\n`;
  else if (k === 7) text = text.replace(/"tool_name"/, '"tool_name": "Read", "tool_name"');
  else if (k === 8) text = "[]";
  return { name, kind, text };
}

/**
 * Leases of others that expired within the last 70 s: through a sync remote (a 60 s takeover
 * grace) some still stand when a payload runs (up to 25 s later) and some no longer, a few across
 * the grace's end meanwhile. From a generator of their own, so the scenarios' other draws stay as they were.
 */
export function graceLeases(g: Rng, now: number): Lease[] {
  return Array.from({ length: 4 + g.int(5) }, () => {
    const agent = g.pick(["alice", "carol"]);
    return {
      pattern: g.pick(g.chance(0.9) ? EXACT : PATTERNS),
      agent,
      task: g.chance(0.3) ? `t-${agent}` : null,
      exclusive: g.chance(0.5),
      acquired_at: new Date(now - 10 * 60_000).toISOString(),
      expires_at: new Date(now - 1_000 - g.int(69_000)).toISOString(),
      ttl_ms: 5 * 60_000,
      reason: g.chance(0.5) ? null : "refactor",
      worktree: null,
      branch: null,
      scope: "worktree" as const,
    };
  });
}

export function randomLeases(r: Rng, now: number): Lease[] {
  const leases: Lease[] = [];
  const n = FOCUS ? 4 + r.int(10) : r.int(14);
  for (let i = 0; i < n; i++) {
    const agent = FOCUS ? r.pick(["alice", "carol"]) : r.pick(AGENTS);
    const ttl = (1 + r.int(90)) * 60_000;
    // Live ones at least a minute from expiry, expired ones at least a minute past it: the two processes compared run seconds apart.
    let left = r.chance(0.2) ? -(1 + r.int(60)) * 60_000 : (1 + r.int(60)) * 60_000 + 30_000;
    if (Math.abs(left - (ttl * 2) / 3) < 60_000) left += 120_000; // never on the edge of a renewal falling due
    // Others' leases may also end near where "in 59s" turns into "in 2m" and the like, or within the run's clock offsets.
    if (agent !== "bob" && r.chance(0.3)) left = r.pick([300, 999, 1000, 1499, 1500, 59_499, 59_500, 119_499, 119_500, 120_000, 7_199_999, 7_200_000, 172_800_000, 200_000_000]) + r.int(30_000);
    leases.push({
      pattern: r.pick(r.chance(FOCUS ? 0.95 : 0.8) ? EXACT : PATTERNS),
      agent,
      task: agent === "bob" && r.chance(0.3) ? "t1" : r.chance(0.3) ? r.pick([`t-${agent}`, "t-\u00e9t\u00e9", 't"q"']) : null,
      exclusive: r.chance(0.4),
      acquired_at: new Date(now - 60_000).toISOString(),
      expires_at: new Date(now + left).toISOString(),
      ttl_ms: ttl,
      reason: r.chance(0.5) ? null : r.pick(["refactor", 'a "quoted" reason \\ with a backslash', "tab\there", "two\nlines", "\u00e9 \u4e2d", "\u001b[31mred\u001b[0m", "\u202eevil", "\ud800 lone", ""]),
      worktree: r.chance(0.7) ? null : r.pick(["/w/alice", "/w/it's here"]),
      branch: r.chance(0.5) ? null : "feat/x",
      scope: "worktree",
    });
  }
  return leases;
}

/** The full hook's answer to an agent payload, as hook-main.ts gives it, in process. */
async function fullAnswer(name: string, kind: AgentKind, text: string, repo: string): Promise<{ stdout: string; code: number } | string> {
  try {
    const payload = parsePayload(text, name);
    const intent = editIntent(kind, payload);
    if (!intent.paths.length) return { stdout: "", code: 0 };
    const after = name === "gemini-after-tool";
    const dir = intent.cwd ?? repo;
    let store;
    try {
      store = await openSyncedStore({ cwd: dir, agent: "bob" });
    } catch (e) {
      if (e instanceof HandoffError && e.code === "not_a_repo") return { stdout: "", code: 0 };
      throw e;
    }
    try {
      const result = await checkEdit(store, intent.paths, dir, { shell: intent.shell, readOnly: after });
      if (after) return afterToolAnswer(result.text);
      return formatAnswer(kind, result);
    } catch (e) {
      if (intent.shell) return { stdout: "", code: 0 };
      throw e;
    } finally {
      store.close();
    }
  } catch (e) {
    return `fails: ${(e as Error).message}`;
  }
}

/** The fast path's answer, or "full" when it hands over (a stand-in full hook says so). */
function fastAnswer(script: string, bin: string, name: string, text: string, repo: string, now: string): Promise<{ stdout: string; code: number } | "full"> {
  return new Promise((resolve, reject) => {
    const env = cleanEnv({ HANDOFF_AGENT: "bob", PATH: `${bin}:${process.env.PATH}`, HANDOFF_NOW: now, HANDOFF_FAST_HOOK_CLOCK: "1" });
    const child = spawn(script, [name], { cwd: repo, env });
    child.stderr.resume();
    let out = "";
    child.stdout.on("data", (b) => (out += b));

    child.on("error", reject);
    child.on("close", (code) => resolve(out === "FULL HOOK\n" ? "full" : { stdout: out, code: code ?? 1 }));
    // A hook that answers without reading all its input (EPIPE) reports through its output, not by killing the test.
    child.stdin.on("error", () => {});
    child.stdin.end(text);
  });
}

export async function scenario(r: Rng, index: number, script: string, bin: string): Promise<{ cases: number; fast: number; said: number; denied: number; shell: number }> {
  // One scripted clock for the cache and both hooks; each payload runs up to 25 s later.
  const base = Date.now();
  process.env.HANDOFF_NOW = new Date(base).toISOString();
  const repo = tempRepo();
  mkdirSync(join(repo, "src/api"), { recursive: true });
  mkdirSync(join(repo, "lib/deep"), { recursive: true });
  writeFileSync(join(repo, "src/a.ts"), "a\n");
  symlinkSync("../lib", join(repo, "src/link"));
  symlinkSync(tempDir(), join(repo, "outside-link"));
  const mode = FOCUS ? (index % 2 ? "advisory" : "balanced") : r.pick(["balanced", "balanced", "balanced", "advisory", "advisory", "strict"]);
  const autoLease = FOCUS ? ["auto_lease: false"] : r.chance(0.5) ? [`auto_lease: ${r.chance(0.3)}`] : [];
  const yaml = [`mode: ${mode}`, ...autoLease, ...(r.chance(0.3) ? ["ignore:", "  - lib/x.gen.ts"] : [])];
  writeFileSync(join(repo, ".handoff.yaml"), yaml.join("\n") + "\n");
  if (r.chance(0.3)) writeFileSync(join(repo, ".gitattributes"), "docs/** linguist-generated\n");
  if (!FOCUS && r.chance(0.3)) assert.is(cli(["session", "start", "--objective", "work", "--files", r.pick(["src/api/**", "docs/guide.md", "lib/*.ts"])], { cwd: repo, agent: "bob" }).code, 0);
  // Every other scenario has a sync remote: others' leases stand for the takeover grace past their expiry.
  const grace = !FOCUS && index % 2 === 1;
  if (grace) {
    const bare = tempDir();
    gitOut(bare, "init", "-q", "--bare");
    gitOut(repo, "remote", "add", "origin", bare);
  }
  const store = await openSyncedStore({ cwd: repo, agent: "bob" });
  const record: LeaseSet = { leases: randomLeases(r, store.now().getTime()) };
  if (grace) {
    assert.is(await store.takeoverGrace(), 60_000, "a sync remote: the default max_clock_skew");
    record.leases.push(...graceLeases(rng(SEED + index), store.now().getTime()));
  }
  const live = record.leases.filter((l) => l.agent === "bob" && Date.parse(l.expires_at) > base);
  OWN = live.flatMap((l) => {
    const base = l.pattern.replace(/\/\*\*$/, "");
    if (!/[*?[\]{}]/.test(l.pattern)) return [l.pattern];
    if (!/[*?[\]{}]/.test(base)) return [`${base}/a.ts`, `${base}/deep/users.ts`];
    return l.pattern.startsWith("**/") ? [`src/${l.pattern.slice(3)}`] : [];
  });
  await mutateLeases(store, (_s, ctx) => ({
    ok: true,
    record,
    steps: [{ event: { type: "leased", task: "", agent: "bob", at: ctx.now.toISOString(), scope: "primary", worktree: null, branch: null, paths: ["(property test)"] }, record }],
  }));
  await refreshFastCache(store, { HANDOFF_AGENT: "bob" });
  store.close();

  let fast = 0;
  let said = 0;
  let denied = 0;
  let shell = 0;
  const refs = () => gitOut(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/handoff/");
  let before = refs();
  const payloads = Array.from({ length: PAYLOADS }, () => ({ ...randomPayload(r, repo), now: new Date(base + r.int(25_000)).toISOString() }));
  // Four at a time: each fast path run is a few short processes, mostly waiting on each other.
  const answers: Awaited<ReturnType<typeof fastAnswer>>[] = [];
  for (let i = 0; i < payloads.length; i += 4) answers.push(...(await Promise.all(payloads.slice(i, i + 4).map((p) => fastAnswer(script, bin, p.name, p.text, repo, p.now)))));
  for (let i = 0; i < payloads.length; i++) {
    const p = payloads[i]!;
    const got = answers[i]!;
    if (got === "full") continue;
    fast++;
    if (/git-handoff (deny|warn|info)/.test(got.stdout)) {
      said++;
      if (/"tool_name":\s*"(Bash|exec_command|run_shell_command)"/.test(p.text)) shell++;
    }
    if (/"(permissionDecision|permission|decision)":"deny"/.test(got.stdout)) denied++;
    process.env.HANDOFF_NOW = p.now;
    const want = await fullAnswer(p.name, p.kind, p.text, repo);
    const where = `seed ${SEED}, scenario ${index}, payload ${i} at ${p.now}: ${p.name} ${p.text.slice(0, 300)}`;
    const shown = (a: typeof want) => (typeof a === "string" ? a : JSON.stringify(a));
    assert.is(shown(got), shown(want), where);
    assert.is(refs(), before, `the full hook wrote, the fast path did not: ${where}`);
    // Now and then the real full hook process too: the in-process answer above is the same as its.
    if (fast % 12 === 1) {
      const env = cleanEnv({ HANDOFF_AGENT: "bob", HANDOFF_FAST_HOOK: "0", HANDOFF_NOW: p.now, HANDOFF_HOOK_CATCH_WAIT: "1" });
      const real = spawnSync(process.execPath, [CLI, "hook", p.name], { cwd: repo, input: p.text, encoding: "utf8", env });
      assert.is(real.stdout, got.stdout, `the full hook process: ${where}`);
      // A deny, warn or info answer logs a catch (what the fast path leaves to the full hook it starts after answering).
      const logged = got.stdout.includes("git-handoff ") && p.name !== "gemini-after-tool";
      const now = refs();
      const strip = (t: string) => t.split("\n").filter((l) => !l.startsWith("refs/handoff/log/bob ")).join("\n");
      assert.is(logged ? strip(now) : now, logged ? strip(before) : before, `the full hook process wrote: ${where}`);
      before = now;
    }
  }
  delete process.env.HANDOFF_NOW;
  return { cases: payloads.length, fast, said, denied, shell };
}

/**
 * A copy of the fast-path script with no bundle next to it, so handing over runs `git-handoff`
 * from PATH: `bin` holds a stand-in with the body given, which says it was reached.
 */
export function isolatedFastHook(standIn: string): { script: string; bin: string } {
  const root = tempDir("handoff-fast-");
  mkdirSync(join(root, "git-hooks"));
  const script = join(root, "git-hooks/fast-hook.sh");
  copyFileSync(FAST_HOOK, script);
  chmodSync(script, 0o755);
  const bin = join(root, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "git-handoff"), `#!/bin/sh\n${standIn}\n`);
  chmodSync(join(bin, "git-handoff"), 0o755);
  return { script, bin };
}
