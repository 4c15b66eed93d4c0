// Test support for the session loop: a scripted agent (a real process the loop starts in each
// unit's worktree) that does each task's work as its objective spells it, commits it and marks the
// task done through the real CLI; and a repository with the six tasks.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, gitOut, tempDir, tempRepo } from "./repo.ts";

/**
 * The agent. Each task's objective is `;`-separated steps: `write PATH [TEXT]` (committed),
 * `dirty PATH` (left uncommitted), `review` (done through a passing verification, so the task
 * goes to review), `quit` (exit without marking it done). Environment: LOOP_TEST_DIR gets a line
 * per start in `starts` and a marker per unit; LOOP_TEST_PAIR makes each agent wait until two
 * have started (proof that they ran at once); LOOP_TEST_GATE makes it wait for that file first,
 * and the unit named by LOOP_TEST_SCRIBBLE leaves an uncommitted file before it waits.
 */
const AGENT = `
import { execFileSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
const env = process.env;
const dir = env.LOOP_TEST_DIR;
const spec = JSON.parse(readFileSync(env.HANDOFF_TASK_FILE, "utf8"));
appendFileSync(join(dir, "starts"), spec.unit + " " + process.pid + " " + env.HANDOFF_AGENT + " " + process.cwd() + "\\n");
writeFileSync(join(dir, spec.unit + ".started"), "");
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
const waitFor = (ok, what) => { const t0 = Date.now(); while (!ok()) { if (Date.now() - t0 > 60000) { console.error("gave up waiting for " + what); process.exit(9); } sleep(50); } };
if (env.LOOP_TEST_PAIR) waitFor(() => readdirSync(dir).filter((f) => f.endsWith(".started")).length >= 2, "a second agent");
if (env.LOOP_TEST_SCRIBBLE === spec.unit) writeFileSync("scribble.txt", "not committed\\n");
if (env.LOOP_TEST_GATE) waitFor(() => existsSync(env.LOOP_TEST_GATE), "the gate");
const id = ["-c", "user.name=agent", "-c", "user.email=agent@example.com"];
for (const t of spec.tasks) {
  let review = false;
  for (const step of t.objective.split(";").map((s) => s.trim()).filter(Boolean)) {
    const [verb, path, ...text] = step.split(" ");
    if (verb === "write" || verb === "dirty") {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, (text.length ? text.join(" ") : t.id + " by " + env.HANDOFF_AGENT) + "\\n");
      if (verb === "write") execFileSync("git", ["add", "--", path]);
    } else if (verb === "review") review = true;
    else if (verb === "quit") process.exit(0);
  }
  if (execFileSync("git", ["diff", "--cached", "--name-only"]).length) execFileSync("git", [...id, "commit", "-q", "--no-verify", "-m", t.id + ": work"]);
  execFileSync(process.execPath, [env.LOOP_TEST_CLI, "done", t.id, ...(review ? ["--verify", "true"] : [])], { stdio: "ignore" });
  appendFileSync(join(dir, "done"), t.id + "\\n");
}
`;

export interface LoopRepo {
  repo: string;
  /** Where the agents leave their traces (starts, markers, done). */
  dir: string;
  /** `--agent-cmd` for the scripted agent. */
  agent: string;
  env: NodeJS.ProcessEnv;
  starts(): { unit: string; pid: number; agent: string; cwd: string }[];
}

/** The tasks are added in-process by the lead, in order (`task add OBJECTIVE --id ID [--scope G]... [--after ID]`). */
export async function loopRepo(tasks: { id: string; objective: string; scope?: string[]; after?: string }[]): Promise<LoopRepo> {
  const repo = tempRepo();
  writeFileSync(join(repo, "README.md"), "the project\n");
  gitOut(repo, "add", "README.md");
  gitOut(repo, "commit", "-qm", "readme");
  const dir = tempDir("handoff-loop-test-");
  const script = join(dir, "agent.mjs");
  writeFileSync(script, AGENT);
  // Loaded only here: a file whose loops start with no task (their tasks added by the command it tests) does not load the store.
  const { storeTasks } = tasks.length ? await import("./seed.ts") : { storeTasks: null };
  if (storeTasks) await storeTasks({ cwd: repo, agent: "lead" }, tasks.map((t) => ({ id: t.id, objective: t.objective, ...(t.scope ? { scope: t.scope } : {}), ...(t.after ? { after: [t.after] } : {}) })));
  return {
    repo,
    dir,
    agent: `"${process.execPath}" "${script}"`,
    // The loop's unit folders go under the test's own temp folder, removed with it.
    env: { LOOP_TEST_DIR: dir, LOOP_TEST_CLI: CLI, TMPDIR: dir },
    starts: () =>
      existsSync(join(dir, "starts"))
        ? readFileSync(join(dir, "starts"), "utf8").trim().split("\n").map((l) => {
            const [unit, pid, agent, cwd] = l.split(" ");
            return { unit: unit!, pid: Number(pid), agent: agent!, cwd: cwd! };
          })
        : [],
  };
}

/** The six tasks: two overlapping scopes (api, users), a chain of three, one on its own. */
export const SIX = [
  { id: "api", objective: "write src/api/index.ts", scope: ["src/api/**"] },
  { id: "users", objective: "write src/api/users.ts", scope: ["src/api/users.ts"] },
  { id: "c1", objective: "write lib/one.ts", scope: ["lib/one.ts"] },
  { id: "c2", objective: "write lib/two.ts", scope: ["lib/two.ts"], after: "c1" },
  { id: "c3", objective: "write lib/three.ts", scope: ["lib/three.ts"], after: "c2" },
  { id: "docs", objective: "write docs/guide.md", scope: ["docs/**"] },
];

/** Linked worktrees git knows besides the main one. */
export function linkedWorktrees(repo: string): string[] {
  return gitOut(repo, "worktree", "list", "--porcelain")
    .split("\n")
    .filter((l) => l.startsWith("worktree "))
    .map((l) => l.slice(9))
    .filter((p) => p !== repo);
}

/** The unit homes a loop left in the temp folder (each should be gone after cleanup). */
export function unitHomes(tmp: string, loopId: string): string[] {
  return readdirSync(tmp).filter((n) => n.startsWith(`handoff-loop-${loopId}-`));
}

export function taskStatus(repo: string, id: string): string {
  return JSON.parse(gitOut(repo, "show", `refs/handoff/tasks/${id}:task.json`)).status;
}

export function loopRecord(repo: string): any {
  return JSON.parse(gitOut(repo, "show", "refs/handoff/loop:loop.json"));
}
