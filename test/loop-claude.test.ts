// `loop run --with claude`: the real Claude Code CLI (the pinned npm release) as the unit's agent,
// driven by a scripted model on 127.0.0.1. It gets the unit's prompt, works in the unit's worktree
// under the unit's agent name (the project's hooks see that name), commits, marks the task done,
// and the loop merges its work.
import { mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { clientBin, clientEnv, newHome, scenarioRepo } from "./agents/clients.ts";
import { startModel } from "./agents/model-server.ts";
import { cleanupTemp, cli, cliAsync, gitOut, tempDir } from "./support/repo.ts";

test.after(cleanupTemp);

test("a unit run by Claude Code: prompt in, SessionStart as the unit's agent, work committed, task done, merged into main", async () => {
  const repo = scenarioRepo();
  assert.is(cli(["task", "add", "write hello.txt saying hello", "--id", "greet", "--scope", "hello.txt"], { cwd: repo, agent: "lead" }).code, 0);
  // A fixed clock makes the loop's id, and so the unit's worktree, known before the run.
  const now = "2026-12-01T12:00:00.000Z";
  const id = new Date(now).getTime().toString(36);
  const tmp = tempDir("handoff-loop-tmp-");
  const worktree = join(tmp, `handoff-loop-${id}-u1`, "worktree");
  const model = await startModel("anthropic", [
    { tools: [{ name: "Write", input: { file_path: join(worktree, "hello.txt"), content: "hello from claude\n" } }] },
    { tools: [{ name: "Bash", input: { command: "git add hello.txt", description: "stage it" } }] },
    { tools: [{ name: "Bash", input: { command: "git commit -q -m 'greet: hello'", description: "commit it" } }] },
    { tools: [{ name: "Bash", input: { command: "git handoff done greet", description: "tell the loop" } }] },
    { text: "all tasks done" },
  ]);
  try {
    const home = newHome();
    mkdirSync(join(home, ".claude"), { recursive: true });
    const env = clientEnv(home, {
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: "dummy",
      HANDOFF_NOW: now,
      TMPDIR: tmp,
      PATH: `${clientEnv(home).PATH}:${dirname(clientBin("claude"))}`,
    });
    const r = await cliAsync(["loop", "run", "--with", "claude", "--poll", "200ms", "--json"], { cwd: repo, agent: "lead", env });
    assert.is(r.code, 0, `${r.stderr}\n${safeRead(join(worktree, "..", "agent.log")).slice(-3000)}`);
    assert.is(r.json.id, id);
    assert.equal(r.json.units.map((u: any) => [u.id, u.tasks, u.phase]), [["u1", ["greet"], "merged"]]);
    const seen = model.seen();
    assert.match(seen, `You are agent loop-${id}-u1, working on unit u1 of git-handoff loop ${id}`);
    assert.match(seen, "| write hello.txt saying hello");
    assert.match(seen, "untrusted: written by another agent");
    // The project's SessionStart hook ran in the unit's worktree and knew the unit's agent.
    assert.match(seen, `git-handoff: you are agent loop-${id}-u1`);
    assert.match(seen, "- greet: write hello.txt saying hello");
    for (const res of model.toolResults()) assert.not.match(res, /^\[error\]/, res);
    assert.is(readFileSync(join(repo, "hello.txt"), "utf8"), "hello from claude\n");
    assert.is(gitOut(repo, "log", "-1", "--format=%s", "main^2"), "greet: hello");
    assert.is(JSON.parse(gitOut(repo, "show", "refs/handoff/tasks/greet:task.json")).status, "done");
    assert.is(gitOut(repo, "worktree", "list", "--porcelain").split("\n").filter((l) => l.startsWith("worktree ")).length, 1);
  } finally {
    await model.stop();
  }
});

function safeRead(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

test.run();
