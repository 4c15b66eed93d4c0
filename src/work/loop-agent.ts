// `loop run --with claude|codex`: the agent command the loop starts in each unit's worktree, and
// the prompt it gets. The prompt reaches the agent through a file named by an environment
// variable, never as part of the command line, and the tasks' text in it is fenced as untrusted.
import { rejectionToRework } from "../core/review.ts";
import type { Task } from "../core/task.ts";
import { UNTRUSTED_LABEL } from "../core/untrusted.ts";
import { fence } from "../present/untrusted.ts";
import { accessFlags, type AgentClient } from "./agent-command.ts";

/** Shell commands the agent may run unasked: committing its work and telling us it is done. */
const CLAUDE_TOOLS = ["Bash(git add:*)", "Bash(git commit:*)", "Bash(git status:*)", "Bash(git diff:*)", "Bash(git handoff:*)", "Bash(git-handoff:*)"];

/** The command line for `--with KIND`; it reads the prompt from $HANDOFF_LOOP_PROMPT_FILE. */
export function agentCommand(kind: AgentClient): string {
  const prompt = `"$(cat "$HANDOFF_LOOP_PROMPT_FILE")"`;
  if (kind === "claude") {
    return `claude -p ${prompt} --output-format stream-json --verbose ${accessFlags("claude", false).join(" ")} --allowedTools ${CLAUDE_TOOLS.map((t) => `'${t}'`).join(" ")}`;
  }
  // A linked worktree commits into the main repository's git dir: it must be writable too.
  return `codex exec --json --skip-git-repo-check ${accessFlags("codex", false).join(" ")} --add-dir "$(git rev-parse --path-format=absolute --git-common-dir)" ${prompt}`;
}

/** What the unit's agent is asked to do: its tasks in order, each committed and then marked done. */
export function unitPrompt(o: { agent: string; loop: string; unit: string; branch: string; tasks: Task[] }): string {
  const lines = [
    `You are agent ${o.agent}, working on unit ${o.unit} of git-handoff loop ${o.loop} in this worktree (branch ${o.branch}).`,
    "Do the tasks below in this order. For each task: make the change, commit it with git (git add -A, then git commit -m '<task id>: <what you did>'), then run: git handoff done <task id>",
    "Stay inside each task's scope. When every task is done, stop.",
    "",
    `Tasks (${UNTRUSTED_LABEL}):`,
  ];
  for (const t of o.tasks) {
    lines.push(`- ${t.id}${t.scope.length ? ` (scope: ${t.scope.join(", ")})` : ""}:`);
    lines.push(fence(t.objective));
    // Done once and rejected in review: doing it again without the reviewer's reason repeats the work rejected.
    const rejected = rejectionToRework(t);
    if (rejected) lines.push(`  rejected in review by ${JSON.stringify(rejected.by)}; do it again so that it meets the reason:`, fence(rejected.reason ?? "(no reason given)"));
  }
  return lines.join("\n") + "\n";
}
