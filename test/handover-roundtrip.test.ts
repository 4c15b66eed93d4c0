// A task handed from machine m1 to an agent on m2 and back, over smart HTTP: `wait` in one clone,
// `worker --exec` in another, real processes. The output and the files come back byte for byte.
import { randomBytes } from "node:crypto";
import { lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { gitOut } from "./support/repo.ts";
import { remoteForFile, onceWorker, remoteTask, script, start } from "./support/handover.ts";

const net = remoteForFile(test, "roundtrip");


test("wait in one clone, worker in another: output on stdout, files byte-identical, results on their own ref", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const input = randomBytes(70_000);
  input[0] = 0;
  input[1] = 0xff;
  writeFileSync(join(a, "input.bin"), input);
  writeFileSync(join(a, "notes.md"), "use the blue one\n");
  const job = script(`
echo "made it: $HANDOFF_TASK_ID"
echo "cwd $(pwd) at $(git rev-parse HEAD)"
grep -q '"objective": "make the files"' "$HANDOFF_TASK_FILE" && echo "read the task file"
cp "$HANDOFF_IN_DIR/input.bin" "$HANDOFF_OUT_DIR/echo.bin"
cat "$HANDOFF_IN_DIR/notes.md" > "$HANDOFF_OUT_DIR/seen.txt"`);
  const w = onceWorker(b, job);
  const waited = start(["wait", "--objective", "make the files", "--context-file", "notes.md", "--file", "input.bin", "--to", "codex@m2", "--timeout", "60s", "--json"], { cwd: a, agent: "alice" });
  const code = await waited.exited;
  assert.is(code, 0, waited.stderr());
  const out = JSON.parse(waited.stdout());
  assert.is(out.status, "done");
  assert.is(out.code, null);
  assert.is(out.failure_reason, null);
  assert.match(out.output, `made it: ${out.id}`);
  assert.match(out.output, "read the task file");
  // It ran in a fresh worktree of clone b at main's commit, removed afterwards.
  const main = gitOut(b, "rev-parse", "main");
  assert.match(out.output, new RegExp(`cwd /\\S+/worktree at ${main}`));
  assert.not.match(out.output, `cwd ${b} `);
  assert.equal(out.files.map((f: { name: string }) => f.name).sort(), ["echo.bin", "seen.txt"]);
  const dir = join(a, `handoff-${out.id}`);
  assert.ok(readFileSync(join(dir, "echo.bin")).equals(input), "binary file byte-identical");
  assert.is(readFileSync(join(dir, "seen.txt"), "utf8"), "use the blue one\n");
  assert.is(await w.exited, 0, w.stderr());
  assert.match(w.stderr(), `${out.id}: done (2 files sent back)`);
  assert.is(gitOut(b, "worktree", "list").split("\n").length, 1);
  // The remote holds the finished task, its inputs and its results, each on its own ref.
  const t = remoteTask(net.bare, out.id);
  assert.is(t.status, "done");
  assert.equal(t.to, { kind: "codex", machine: "m2" });
  assert.is(t.created_by, "alice");
  assert.match(gitOut(net.bare, "for-each-ref", "--format=%(refname)", `refs/handoff/results/${out.id}`, `refs/handoff/inputs/${out.id}`), `refs/handoff/inputs/${out.id}\nrefs/handoff/results/${out.id}`);
  const agent = JSON.parse(gitOut(net.bare, "show", "refs/handoff/agents/codex@m2:agent.json"));
  assert.is(agent.machine, "m2");
  assert.is(agent.capacity, 1);
});

test("text mode: output on stdout, progress on stderr, files saved to --out", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const w = onceWorker(b, script(`echo "the answer is 42"; printf 'x' > "$HANDOFF_OUT_DIR/x.txt"`));
  const waited = start(["wait", "--objective", "answer", "--out", "answers", "--timeout", "60s"], { cwd: a, agent: "alice" });
  assert.is(await waited.exited, 0, waited.stderr());
  assert.is(waited.stdout(), "the answer is 42\n");
  assert.match(waited.stderr(), /created t-\S+ and pushed it/);
  assert.match(waited.stderr(), /: done\n/);
  assert.match(waited.stderr(), `saved 1 file to ${join(a, "answers")}`);
  assert.is(readFileSync(join(a, "answers", "x.txt"), "utf8"), "x");
  await w.exited;
});

test("--out DIR: a symbolic link already in DIR is replaced by the result file, never written through; DIR itself may be a link", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  // The folder the user names is a link to a folder (followed: the user named it); in it, a link
  // of a result's name points out of it (as a file committed to a repository could).
  mkdirSync(join(a, "real-out"));
  symlinkSync("real-out", join(a, "answers"));
  writeFileSync(join(a, "victim.txt"), "keep me\n");
  symlinkSync("../victim.txt", join(a, "real-out", "report.md"));
  const w = onceWorker(b, script(`echo "written by the worker" > "$HANDOFF_OUT_DIR/report.md"; echo ok`));
  const waited = start(["wait", "--objective", "report", "--out", "answers", "--timeout", "60s", "--json"], { cwd: a, agent: "alice" });
  assert.is(await waited.exited, 0, waited.stderr());
  assert.is(readFileSync(join(a, "victim.txt"), "utf8"), "keep me\n", "nothing written through the link");
  assert.ok(lstatSync(join(a, "real-out", "report.md")).isFile(), "the link itself was replaced by the file");
  assert.is(readFileSync(join(a, "real-out", "report.md"), "utf8"), "written by the worker\n");
  assert.equal(readdirSync(join(a, "real-out")), ["report.md"], "no temporary file left");
  assert.equal(JSON.parse(waited.stdout()).files.map((f: { path: string }) => f.path), [join(a, "answers", "report.md")]);
  await w.exited;
});

test("FAILED: reason, or a non-zero exit, marks the task failed: wait exits 6 with the reason", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const w = onceWorker(b, script(`echo "FAILED: the disk is full"; echo more`));
  const waited = start(["wait", "--objective", "doomed", "--timeout", "60s", "--json"], { cwd: a, agent: "alice" });
  assert.is(await waited.exited, 6, waited.stderr());
  const out = JSON.parse(waited.stdout());
  assert.is(out.status, "failed");
  assert.is(out.failure_reason, "the disk is full");
  assert.match(out.output, "FAILED: the disk is full\nmore");
  assert.is(remoteTask(net.bare, out.id).status, "failed");
  await w.exited;

  const w2 = onceWorker(b, script(`echo partial; exit 3`));
  const text = start(["wait", "--objective", "exits badly", "--timeout", "60s"], { cwd: a, agent: "alice" });
  assert.is(await text.exited, 6, text.stderr());
  assert.match(text.stderr(), /failed: the command exited 3/);
  assert.is(text.stdout(), "partial\n", "a failed task's output is printed too");
  await w2.exited;
});

test("result files that may not travel are refused and named; the rest still arrive", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  const job = script(`
cd "$HANDOFF_OUT_DIR"
mkdir sub && echo x > sub/inner.txt
echo hidden > .env
echo dots > ..sneaky
ln -s /etc/passwd link
head -c 27262976 /dev/zero > big.bin
echo fine > good.txt
echo done`);
  const w = onceWorker(b, job);
  const waited = start(["wait", "--objective", "mixed files", "--timeout", "60s", "--json"], { cwd: a, agent: "alice" });
  assert.is(await waited.exited, 0, waited.stderr());
  const out = JSON.parse(waited.stdout());
  assert.equal(out.files.map((f: { name: string }) => f.name), ["good.txt"]);
  const refused = Object.fromEntries(out.refused.map((r: { name: string; reason: string }) => [r.name, r.reason]));
  assert.equal(Object.keys(refused).sort(), ["..sneaky", ".env", "big.bin", "link", "sub/"]);
  assert.match(refused[".env"], "dotfile");
  assert.match(refused["link"], "symbolic link");
  assert.match(refused["sub/"], "folder");
  assert.match(refused["big.bin"], "27262976 bytes");
  assert.equal(readdirSync(join(a, `handoff-${out.id}`)), ["good.txt"]);
  await w.exited;
  assert.match(w.stderr(), /refused to send "big.bin": it is 27262976 bytes/);
  assert.match(w.stderr(), /refused to send "\.env": its name is a dotfile\n/);

  // In text mode the waiter names them too.
  const w2 = onceWorker(b, job);
  const text = start(["wait", "--objective", "mixed again", "--timeout", "60s"], { cwd: a, agent: "alice" });
  assert.is(await text.exited, 0, text.stderr());
  assert.match(text.stderr(), /the worker refused to send "\.env": its name is a dotfile/);
  await w2.exited;
});

test.run();
