// A team setup: one repository, a linked worktree per agent on its own branch.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, gitOut, tempDir, tempRepo, type CliResult } from "./repo.ts";

export interface Team {
  repo: string;
  /** Worktree folder of each agent. */
  wt: Record<string, string>;
  /** Runs the CLI as `agent` in its own worktree (the lead runs in the main one). */
  as(agent: string, args: string[], env?: NodeJS.ProcessEnv): CliResult;
}

export function team(agents: string[]): Team {
  const repo = tempRepo();
  writeFileSync(join(repo, "shared.txt"), "line 1\nline 2\nline 3\n");
  gitOut(repo, "add", "shared.txt");
  gitOut(repo, "commit", "-q", "-m", "shared file");
  const root = tempDir("handoff-wt-");
  const wt: Record<string, string> = {};
  for (const a of agents) {
    wt[a] = join(root, a);
    gitOut(repo, "worktree", "add", "-q", "-b", `${a}-work`, wt[a]!, "main");
  }
  return {
    repo,
    wt,
    as: (agent, args, env) => cli(args, { cwd: wt[agent] ?? repo, agent, ...(env ? { env } : {}) }),
  };
}

/** Commits a file change in a worktree and returns the new commit id. */
export function commitFile(dir: string, file: string, content: string, message = `edit ${file}`): string {
  writeFileSync(join(dir, file), content);
  gitOut(dir, "add", file);
  gitOut(dir, "commit", "-q", "-m", message);
  return gitOut(dir, "rev-parse", "HEAD");
}

/** An ISO time `ms` after now: for HANDOFF_NOW. */
export function later(ms: number): string {
  return new Date(Date.now() + ms).toISOString();
}

export const MIN = 60_000;
export const DAY = 86_400_000;
