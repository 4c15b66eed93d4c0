// A task's verify command is shared state: it runs on `done` only if it was written in this clone
// or a person approved that exact command here (on a terminal, or with HANDOFF_APPROVE=<sha256>).
import { createHash } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { amendRecord } from "./support/forge.ts";
import { cliOnTerminal } from "./support/pty.ts";
import { cleanupTemp, cli, gitOut, handoffRefs, tempDir, tempRepo } from "./support/repo.ts";
import { storeClaim, storeSync, storeTasks } from "./support/seed.ts";
import { cloneOf, serveRoot } from "./support/servers.ts";

test.after(cleanupTemp);

const ok = (r: ReturnType<typeof cli>) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r;
};

/** Clone `a` writes a task whose verify command would leave a marker file; clone `b` receives it (written in-process: support/seed.ts). */
async function project(id: string) {
  const bare = serveRoot().bare("project");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const a = cloneOf(bare);
  const b = cloneOf(bare);
  const marker = join(tempDir(), `PWNED-${id}`);
  const command = `touch ${marker}; echo all tests passed`;
  await storeTasks({ cwd: a, agent: "mallory" }, [{ id, objective: "innocent", verify: command }]);
  await storeSync({ cwd: a });
  await storeSync({ cwd: b });
  return { a, b, marker, command };
}

test("a verify command from another clone: claim and task show name it and its author; done refuses and runs nothing", async () => {
  const { b, marker, command } = await project("t1");
  const claimed = ok(cli(["claim", "t1"], { cwd: b, agent: "alice" }));
  assert.ok(claimed.stdout.includes(`verify:     ${command}  (written by mallory)`), claimed.stdout);
  assert.match(claimed.stdout, /not written or approved in this clone: .*git handoff approve t1/);
  assert.match(ok(cli(["task", "show", "t1"], { cwd: b })).stdout, /verify: .*touch .*\(written by mallory\)\n.*git handoff approve t1/);
  const before = handoffRefs(b);
  const done = cli(["done", "t1", "--json"], { cwd: b, agent: "alice" });
  assert.is(done.code, 3);
  assert.is(done.json.error.code, "unapproved_command");
  assert.is(done.json.error.data.command, command);
  assert.is(done.json.error.data.author, "mallory");
  assert.match(done.stderr, /did not run: "touch .*written by mallory/);
  assert.not.ok(existsSync(marker), "nothing ran");
  assert.is(handoffRefs(b), before, "no ref moved");
  // Without a terminal, approval needs the hash: none, or a wrong one, approves nothing.
  const none = cli(["approve", "t1", "--json"], { cwd: b, agent: "alice" });
  assert.is(none.code, 3);
  assert.is(none.json.error.code, "unapproved_command");
  assert.is(cli(["approve", "t1"], { cwd: b, agent: "alice", env: { HANDOFF_APPROVE: "0".repeat(64) } }).code, 3);
  assert.is(cli(["done", "t1"], { cwd: b, agent: "alice" }).code, 3);
  assert.not.ok(existsSync(marker));
});

test("approved on a terminal (a pseudo-terminal here): shown first, 'n' approves nothing, 'y' lets done run it", async () => {
  const { b, marker, command } = await project("t2");
  await storeClaim({ cwd: b, agent: "alice" }, "t2");
  const no = cliOnTerminal(["approve", "t2"], { cwd: b, agent: "alice", prompt: "[y/N]", answer: "n" });
  assert.is(no.code, 3, no.output);
  assert.ok(no.output.includes(command), "the command is shown before the question");
  assert.match(no.output, /written by: mallory/);
  assert.match(no.output, /origin: +written elsewhere \(received from the sync remote origin\)/);
  assert.is(cli(["done", "t2"], { cwd: b, agent: "alice" }).code, 3);
  assert.not.ok(existsSync(marker));
  const yes = cliOnTerminal(["approve", "t2"], { cwd: b, agent: "alice", prompt: "[y/N]", answer: "y" });
  assert.is(yes.code, 0, yes.output);
  assert.match(yes.output, /approved in this clone/);
  assert.match(gitOut(b, "for-each-ref", "--format=%(refname)", "refs/handoff-local/"), /refs\/handoff-local\/approvals/);
  assert.not.match(gitOut(b, "for-each-ref", "--format=%(refname)", "refs/handoff/"), /approvals/, "approvals are local only");
  const done = ok(cli(["done", "t2", "--json"], { cwd: b, agent: "alice" }));
  assert.is(done.json.status, "review");
  assert.ok(existsSync(marker), "the approved command ran");
});

test("approved with HANDOFF_APPROVE=<sha256 of the command>; a command written in this clone needs nothing", async () => {
  const { a, b, marker, command } = await project("t3");
  await storeClaim({ cwd: b, agent: "alice" }, "t3");
  const hash = createHash("sha256").update(command).digest("hex");
  const r = ok(cli(["approve", "t3", "--json"], { cwd: b, agent: "alice", env: { HANDOFF_APPROVE: hash } }));
  assert.is(r.json.approval.how, "approved");
  ok(cli(["done", "t3"], { cwd: b, agent: "alice" }));
  assert.ok(existsSync(marker));
  // In the clone that wrote it, it runs at once.
  const own = join(tempDir(), "OWN");
  ok(cli(["task", "add", "mine", "--id", "mine", "--verify", `touch ${own}`], { cwd: a, agent: "lead" }));
  ok(cli(["claim", "mine"], { cwd: a, agent: "bob" }));
  assert.ok(ok(cli(["approve", "mine"], { cwd: a, agent: "bob" })).stdout.includes("already written in this clone"));
  ok(cli(["done", "mine"], { cwd: a, agent: "bob" }));
  assert.ok(existsSync(own));
});

test("a hand-written multi-line verify is refused by the schema: nothing runs", async () => {
  const repo = tempRepo();
  const marker = join(tempDir(), "TWO");
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "ml", objective: "x", verify: "true" }]);
  await storeClaim({ cwd: repo, agent: "alice" }, "ml");
  amendRecord(repo, "refs/handoff/tasks/ml", (t) => (t.verify = `true\ntouch ${marker}`), { author: "alice" });
  const r = cli(["done", "ml", "--json"], { cwd: repo, agent: "alice" });
  assert.is.not(r.code, 0);
  assert.is(r.json.error.code, "corrupt_state");
  assert.match(r.json.error.message, /verify/);
  assert.not.ok(existsSync(marker));
  writeFileSync(join(repo, "x"), "");
});

test.run();
