// The demo's world: the sample service as a real git repository in a temp folder, one linked
// worktree per session, and a runner for the real `git handoff` CLI, its hooks and plain git, each
// in its own process. Needs nothing but Node and git. A scripted clock (HANDOFF_NOW) makes the
// story's durations readable (minutes, not the milliseconds a script takes).
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const HERE = import.meta.dirname;
export const CLI = resolve(HERE, "../../dist/git-handoff.cjs");
export const FIXTURE = resolve(HERE, "../../fixtures/sample-service");

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Session {
  /** The agent name the session acts as. */
  agent: string;
  /** Its linked worktree and branch. */
  dir: string;
  branch: string;
}

/** Variables that would point our git or CLI calls at another repository or identity. */
const SCRUB = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "HANDOFF_AGENT", "HANDOFF_NOW", "HANDOFF_SESSION", "CLAUDE_PROJECT_DIR"];

export class Sandbox {
  readonly root: string;
  readonly repo: string;
  readonly bin: string;
  private clockMs: number;
  /** Commits carry the scripted clock's time too (the compare run recounts from commit times). */
  datedCommits = false;

  constructor(start: Date, prefix = "handoff-demo-") {
    this.root = mkdtempSync(join(tmpdir(), prefix));
    this.repo = join(this.root, "sample-service");
    this.bin = join(this.root, "bin");
    this.clockMs = Math.floor(start.getTime() / 60_000) * 60_000;
    // git runs `git handoff ...` from its hooks: put a `git-handoff` on PATH that is this build.
    mkdirSync(this.bin);
    writeFileSync(join(this.bin, "git-handoff"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    chmodSync(join(this.bin, "git-handoff"), 0o755);
    // The agents' pre-edit hooks run `git-handoff-hook`, the sh fast path of this checkout.
    symlinkSync(resolve(HERE, "../../git-hooks/fast-hook.sh"), join(this.bin, "git-handoff-hook"));
  }

  /** The scripted clock, as every process of the story sees it. */
  get now(): Date {
    return new Date(this.clockMs);
  }

  advance(minutes: number): void {
    this.clockMs += minutes * 60_000;
  }

  /** Sets the scripted clock (the compare run schedules every step at its own time). */
  setNow(ms: number): void {
    this.clockMs = ms;
  }

  clock(): string {
    return this.now.toISOString().slice(11, 16);
  }

  env(agent: string | null, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of SCRUB) delete env[k];
    const who = agent ?? "lead";
    return {
      ...env,
      PATH: `${this.bin}:${env.PATH ?? ""}`,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: who,
      GIT_AUTHOR_EMAIL: `${who}@demo.invalid`,
      GIT_COMMITTER_NAME: who,
      GIT_COMMITTER_EMAIL: `${who}@demo.invalid`,
      HANDOFF_NOW: this.now.toISOString(),
      // The machine may be loaded: the demo must see each hook's real answer, not a fail-open timeout.
      HANDOFF_HOOK_TIMEOUT_MS: "60000",
      // The story reads `stats` right after hooks: wait for each hook's detached catch writer.
      HANDOFF_HOOK_CATCH_WAIT: "1",
      NO_COLOR: "1",
      ...(this.datedCommits ? { GIT_AUTHOR_DATE: `${Math.floor(this.clockMs / 1000)} +0000`, GIT_COMMITTER_DATE: `${Math.floor(this.clockMs / 1000)} +0000` } : {}),
      ...(agent ? { HANDOFF_AGENT: agent } : {}),
      ...extra,
    };
  }

  private spawn(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, input = ""): Run {
    const r = spawnSync(cmd, args, { cwd, env, input, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
    if (r.error) throw r.error;
    return { code: r.status ?? 1, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
  }

  /** `git handoff ARGS` as `agent` (null: the lead, in the main worktree). */
  handoff(who: Session | null, args: string[], extra: NodeJS.ProcessEnv = {}): Run {
    return this.spawn(process.execPath, [CLI, ...args], who?.dir ?? this.repo, this.env(who?.agent ?? "lead", extra));
  }

  /** A plain git command in a worktree; hooks installed by `git handoff init` run as they would. */
  git(who: Session | null, args: string[], extra: NodeJS.ProcessEnv = {}): Run {
    return this.spawn("git", args, who?.dir ?? this.repo, this.env(who?.agent ?? "lead", extra));
  }

  /** Any command in a worktree with the story's environment (a task's verify command, say). */
  run(who: Session | null, cmd: string, args: string[]): Run {
    return this.spawn(cmd, args, who?.dir ?? this.repo, this.env(who?.agent ?? "lead"));
  }

  /** git that must work (setup steps): throws with git's message otherwise. */
  mustGit(who: Session | null, args: string[]): string {
    const r = this.git(who, args);
    if (r.code !== 0) throw new Error(`git ${args.join(" ")} failed (${r.code}): ${r.stderr.trim()}`);
    return r.stdout.trim();
  }

  /**
   * Claude Code's PreToolUse hook exactly as Claude Code runs it: the command from
   * .claude/settings.json, the JSON payload on stdin, CLAUDE_PROJECT_DIR set.
   */
  claudeEdit(who: Session, file: string, oldString: string, newString: string): Run & { answer: ClaudeAnswer | null } {
    const payload = {
      session_id: `demo-${who.agent}`,
      transcript_path: join(this.root, `${who.agent}.jsonl`),
      cwd: who.dir,
      permission_mode: "default",
      hook_event_name: "PreToolUse",
      tool_name: "Edit",
      tool_input: { file_path: join(who.dir, file), old_string: oldString, new_string: newString, replace_all: false },
      tool_use_id: `toolu_demo_${Date.now()}`,
    };
    const command = claudeHookCommand(who.dir);
    const r = this.spawn("sh", ["-c", command], who.dir, this.env(who.agent, { CLAUDE_PROJECT_DIR: who.dir }), JSON.stringify(payload));
    let answer: ClaudeAnswer | null = null;
    try {
      answer = r.stdout.trim() ? (JSON.parse(r.stdout) as ClaudeAnswer) : null;
    } catch {
      answer = null;
    }
    return { ...r, answer };
  }

  read(who: Session | null, file: string): string {
    return readFileSync(join(who?.dir ?? this.repo, file), "utf8");
  }

  mkdir(who: Session | null, dir: string): void {
    mkdirSync(join(who?.dir ?? this.repo, dir), { recursive: true });
  }

  write(who: Session | null, file: string, text: string): void {
    writeFileSync(join(who?.dir ?? this.repo, file), text);
  }

  /** Replaces one exact piece of text in a file (what an agent's Edit tool does). */
  edit(who: Session, file: string, oldString: string, newString: string): void {
    const text = this.read(who, file);
    if (!text.includes(oldString)) throw new Error(`${file} in ${who.dir} has no ${JSON.stringify(oldString)}`);
    this.write(who, file, text.replace(oldString, newString));
  }

  /** The sample service as a repository on `main`, with its own identity settings. */
  createRepo(): void {
    cpSync(FIXTURE, this.repo, { recursive: true });
    this.mustGit(null, ["init", "-q", "-b", "main"]);
    this.mustGit(null, ["config", "commit.gpgsign", "false"]);
    this.mustGit(null, ["add", "-A"]);
    this.mustGit(null, ["commit", "-q", "-m", "sample service: GET /users/:id, its tests, shared config"]);
  }

  addWorktree(agent: string, branch: string): Session {
    const dir = join(this.root, `wt-${agent}`);
    this.mustGit(null, ["worktree", "add", "-q", "-b", branch, dir, "main"]);
    return { agent, dir, branch };
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

export interface ClaudeAnswer {
  hookSpecificOutput?: { hookEventName?: string; permissionDecision?: string; permissionDecisionReason?: string; additionalContext?: string };
}

/** The PreToolUse command `git handoff init` wrote into .claude/settings.json (committed, so in every worktree). */
export function claudeHookCommand(dir: string): string {
  const settings = JSON.parse(readFileSync(join(dir, ".claude", "settings.json"), "utf8")) as {
    hooks?: { PreToolUse?: { matcher?: string; hooks?: { command?: string }[] }[] };
  };
  const group = settings.hooks?.PreToolUse?.find((g) => (g.matcher ?? "").split("|").includes("Edit"));
  const command = group?.hooks?.find((h) => (h.command ?? "").includes("claude-pre-tool-use"))?.command;
  if (!command) throw new Error(".claude/settings.json has no git-handoff PreToolUse hook for Edit: did git handoff init run?");
  return command;
}
