// Results the published output schemas must admit, on branches no other MCP test reaches. The test
// clients check every result against the listed schemas (test/support/mcp.ts), as the SDK's client
// does: every object there is closed (`additionalProperties: false`), so a field a branch returns
// and its schema lacks fails the whole call with MCP error -32602, and the agent never sees the answer.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { inProcess, type McpHandle } from "./support/mcp.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { cloneOf, serveRoot } from "./support/servers.ts";

const open: McpHandle[] = [];
test.after.each(async () => {
  for (const h of open.splice(0)) await h.close();
});
test.after(cleanupTemp);

/** A bare remote holding one commit on main, and two clones of it. */
function twoClones(name: string): { a: string; b: string } {
  const bare = serveRoot().bare(name);
  gitOut(tempRepo(), "push", "-q", bare, "main");
  return { a: cloneOf(bare), b: cloneOf(bare) };
}

test("sync: a remote holding coordination refs in the other namespace answers `split`, as `sync --json` does", async () => {
  const { a, b } = twoClones("split");
  assert.is(cli(["remote", "origin", "--ref-prefix", "refs/heads/handoff/"], { cwd: a }).code, 0);
  assert.is(cli(["task", "add", "theirs", "--id", "theirs", "--push"], { cwd: a, agent: "lead" }).code, 0);
  const bob = await inProcess(b, { agent: "bob" });
  open.push(bob);
  const r = await bob.call("sync");
  assert.not.ok(r.isError, JSON.stringify(r.content));
  assert.equal((r.structuredContent as any).split, { prefix: "refs/handoff/", namespace: "refs/heads/handoff/", tasks: 1, leases: false });
  assert.match((r.content[0] as { text: string }).text, /warning: origin also holds coordination refs under refs\/heads\/handoff\/ \(1 task ref\(s\)\)/);
});

test.run();
