// A memory's text is held to one rule, written here or received: a forged memory holding terminal
// escapes or bidirectional controls (which `memory add` refuses) is refused on receive too, kept
// out of refs/handoff/, and named with its reason; a clean memory in the same sync arrives.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { amendRecord } from "./support/forge.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { cloneOf, serveRoot } from "./support/servers.ts";

test.after(cleanupTemp);

const ok = (r: ReturnType<typeof cli>) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r;
};

test("a received memory whose text holds control characters is refused (exit 3), as memory add refuses it; the clean one arrives", () => {
  const bare = serveRoot().bare("memories");
  gitOut(tempRepo(), "push", "-q", bare, "main");
  const victim = cloneOf(bare);
  const other = cloneOf(bare);
  const forged = ok(cli(["memory", "add", "the cache is warm", "--json"], { cwd: other, agent: "carol" })).json.id;
  const clean = ok(cli(["memory", "add", "deploys go out on tuesdays", "--json"], { cwd: other, agent: "carol" })).json.id;
  ok(cli(["sync"], { cwd: other }));
  const text = "look here\x1b]0;OWNED\x07\u202e";
  // The same text, written here, is refused.
  const local = cli(["memory", "add", text], { cwd: victim, agent: "victim" });
  assert.is(local.code, 2, local.stderr);
  assert.match(local.stderr, "holds the control character U+001B");
  amendRecord(bare, `refs/handoff/memories/${forged}`, (m) => (m.text = text), { author: "carol", file: "memory.json" });
  const r = cli(["sync"], { cwd: victim, agent: "victim" });
  assert.is(r.code, 3, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, new RegExp(`refused on receive: refs/handoff/memories/${forged}: .*its text holds the control character U\\+001B`));
  assert.equal(gitOut(victim, "for-each-ref", "--format=%(refname)", "refs/handoff/memories/"), `refs/handoff/memories/${clean}`);
  assert.equal(ok(cli(["memory", "list", "--json"], { cwd: victim })).json.map((m: { id: string }) => m.id), [clean]);
});

test.run();
