// A claim looks up this clone's machine name (`handoff.machine`: read from git's files, asked of
// git only where those cannot be read in process) only when the task is addressed to someone: a
// plain claim starts no git process at all (its ref update is written in-process,
// loose-ref-writer.ts), and with reflogs for every ref it is one, its update-ref. A task that turns
// out addressed only inside the compare-and-swap (it was not here when the claim began, as when it
// arrives from the sync remote) is refused as one addressed elsewhere.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { claimChecked } from "../src/store/dependency-actions.ts";
import { openStore } from "../src/store/store.ts";
import { addTask, mutateTask } from "../src/store/task-store.ts";
import { HandoffError } from "../src/core/errors.ts";
import { cleanEnv, cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";
import { storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

/** The git commands a CLI call ran, from GIT_TRACE. */
function gitCommands(repo: string, args: string[], agent: string): { code: number; commands: string[]; json: any } {
  const trace = join(tempDir("handoff-trace-"), "trace");
  const r = cli([...args, "--json"], { cwd: repo, agent, env: { GIT_TRACE: trace } });
  let text = "";
  try {
    text = readFileSync(trace, "utf8");
  } catch {
    /* no git process at all */
  }
  const commands = text.split("\n").filter((l) => l.includes("trace: built-in: git ")).map((l) => l.split("trace: built-in: ")[1]!.trim());
  return { code: r.code, commands, json: r.json };
}

test("a claim of a task addressed to no one starts no git process (one update-ref with reflogs for every ref)", async () => {
  const repo = tempRepo();
  // The tasks in-process (support/seed.ts): the claims' git processes are the subject.
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "t1", objective: "plain work" }, { id: "t2", objective: "more work" }]);
  const r = gitCommands(repo, ["claim", "t1"], "claude-1");
  assert.is(r.code, 0);
  assert.is(r.json.claim.agent, "claude-1");
  assert.equal(r.commands, []);
  gitOut(repo, "config", "core.logAllRefUpdates", "always");
  const logged = gitCommands(repo, ["claim", "t2"], "claude-2");
  assert.is(logged.code, 0);
  // (The changed config file also makes this claim read the repository's policy again, through git.)
  assert.equal(logged.commands.filter((c) => c.startsWith("git update-ref")), ["git update-ref --stdin"]);
  assert.match(gitOut(repo, "reflog", "show", "refs/handoff/tasks/t2"), /./, "git logged the update");
});

test("an addressed task still asks for the machine, read from git's files: taken on the machine it names, refused elsewhere", async () => {
  const repo = tempRepo();
  gitOut(repo, "config", "handoff.machine", "box1");
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "here", objective: "here", to: "@box1" }, { id: "there", objective: "there", to: "@box2" }]);
  const here = gitCommands(repo, ["claim", "here"], "claude-1");
  assert.is(here.code, 0);
  assert.equal(here.commands, [], "the setting is read from the config file, no git process");
  const there = gitCommands(repo, ["claim", "there"], "claude-1");
  assert.is(there.code, 3);
  assert.is(there.json.error.code, "addressed_elsewhere");
});

test("a machine name set where git's files cannot be read in process (an include) is asked of git", async () => {
  const repo = tempRepo();
  const extra = join(tempDir("handoff-include-"), "extra.config");
  writeFileSync(extra, "[handoff]\n\tmachine = box7\n");
  gitOut(repo, "config", "include.path", extra);
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "here", objective: "here", to: "@box7" }]);
  const here = gitCommands(repo, ["claim", "here"], "claude-1");
  assert.is(here.code, 0, JSON.stringify(here.json));
  assert.ok(here.commands.includes("git config --get handoff.machine"), here.commands.join(", "));
  // The last value set wins, read as git gives it (trailing blanks dropped), with no git process.
  const plain = tempRepo();
  writeFileSync(join(plain, ".git", "config"), readFileSync(join(plain, ".git", "config"), "utf8") + "[handoff]\n\tmachine = box1\n[handoff]\n\tmachine = box2   \n");
  assert.is(gitOut(plain, "config", "--get", "handoff.machine"), "box2");
  await storeTasks({ cwd: plain, agent: "lead" }, [{ id: "there", objective: "there", to: "@box2" }]);
  const there = gitCommands(plain, ["claim", "there"], "claude-1");
  assert.is(there.code, 0, JSON.stringify(there.json));
  assert.equal(there.commands, []);
});

test("a task addressed elsewhere that appears only inside the compare-and-swap is refused", async () => {
  const repo = tempRepo();
  gitOut(repo, "config", "handoff.machine", "box1");
  const store = await openStore({ cwd: repo, agent: "claude-1", env: cleanEnv() });
  try {
    let arrived = false;
    // The task is not there when the claim reads it, then arrives addressed to another machine.
    const mutate: typeof mutateTask = async (s, id, op, o) => {
      if (!arrived) {
        arrived = true;
        await addTask(s, { id, objective: "from elsewhere", priority: 0, scope: [], maxAttempts: 3, to: { kind: null, machine: "box2" } });
      }
      return mutateTask(s, id, op, o);
    };
    const e = await claimChecked(store, "late", 60_000, { mutate }).then(() => null, (err) => err);
    assert.ok(e instanceof HandoffError, String(e));
    assert.is((e as HandoffError).code, "addressed_elsewhere");
  } finally {
    store.close();
  }
});

test.run();
