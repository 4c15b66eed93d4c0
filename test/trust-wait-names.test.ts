// `wait` tells the person waiting who holds the task. That name comes from a record someone else
// wrote (the claim commit's author, its claim.agent): it reaches the terminal escaped, as in
// `task show`, never as the escape sequences it holds (a window title set, the screen cleared).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { commit, readRecordAt, setRef, tree, FORMAT } from "./support/forge.ts";
import { cli, cleanupTemp, gitOut, tempRepo } from "./support/repo.ts";
import { cloneOf, serveRoot } from "./support/servers.ts";

test.after(cleanupTemp);

const NAME = "mal\x1b]0;OWNED\x07\x1b[2J\x1b[31mlory";
const SHOWN = "mal\\x1b]0;OWNED\\x07\\x1b[2J\\x1b[31mlory";

/** The tip of `ref` (mallory's claim) made again with NAME as its holder, author and event agent. */
function renameHolder(repo: string, ref: string): void {
  const parent = gitOut(repo, "rev-parse", `${ref}^`);
  const record = readRecordAt(repo, ref);
  record.claim.agent = NAME;
  const message = gitOut(repo, "log", "-1", "--format=%B", ref);
  const at = message.indexOf("\n\n{");
  const event = JSON.parse(message.slice(at + 2));
  event.agent = NAME;
  const t = tree(repo, { format: FORMAT, "task.json": JSON.stringify(record, null, 2) + "\n" });
  setRef(repo, ref, commit(repo, { tree: t, parent, author: NAME, message: `${message.slice(0, at)}\n\n${JSON.stringify(event, null, 2)}\n` }));
}

test("wait --id: the holder's name in its progress and timeout lines is escaped, no raw control character on stderr", () => {
  const repo = tempRepo();
  assert.is(cli(["task", "add", "--id", "t-1", "do it"], { cwd: repo, agent: "lead" }).code, 0);
  assert.is(cli(["claim", "t-1"], { cwd: repo, agent: "mallory" }).code, 0);
  renameHolder(repo, "refs/handoff/tasks/t-1");
  const r = cli(["wait", "--id", "t-1", "--timeout", "1s"], { cwd: repo, agent: "vic" });
  assert.is(r.code, 8, r.stderr);
  assert.match(r.stderr, `t-1: claimed by ${SHOWN} (attempt 1 of 3)`);
  assert.match(r.stderr, `it stays claimed with ${SHOWN} (this wait did not create it`);
  assert.not.match(r.stderr, /[\x00-\x08\x0b-\x1f\x7f]/, JSON.stringify(r.stderr));
});

test("a claim whose author's name holds control characters is refused on receive (exit 3), kept out of refs/handoff/", () => {
  const bare = serveRoot().bare("names");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const victim = cloneOf(bare);
  const attacker = cloneOf(bare);
  assert.is(cli(["task", "add", "--id", "t-2", "do it"], { cwd: victim, agent: "vic" }).code, 0);
  assert.is(cli(["sync"], { cwd: victim, agent: "vic" }).code, 0);
  assert.is(cli(["sync"], { cwd: attacker, agent: "mallory" }).code, 0);
  assert.is(cli(["claim", "t-2"], { cwd: attacker, agent: "mallory" }).code, 0);
  renameHolder(attacker, "refs/handoff/tasks/t-2");
  gitOut(attacker, "push", "-q", "origin", "+refs/handoff/tasks/t-2");
  const before = gitOut(victim, "rev-parse", "refs/handoff/tasks/t-2");
  const r = cli(["sync"], { cwd: victim, agent: "vic" });
  assert.is(r.code, 3, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /refused on receive: refs\/handoff\/tasks\/t-2: .*author of \S+ holds the control character U\+001B/);
  assert.is(gitOut(victim, "rev-parse", "refs/handoff/tasks/t-2"), before);
});

test.run();
