// From inside Claude Code (the real client, scripted model): clone A's agent hands a task to
// clone B through MCP create_task with `to`, and wait_task returns what B's worker sent back.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { claude, cost } from "./agents/clients.ts";
import { cli } from "./support/repo.ts";
import { remoteForFile, onceWorker, script } from "./support/handover.ts";

const net = remoteForFile(test, "mcp-handover-claude");


test("from inside Claude Code: create_task with to, then wait_task returns what B's worker sent back", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  assert.is(cli(["init", "--write"], { cwd: a, agent: "lead" }).code, 0);
  const w = onceWorker(b, script(`echo "B says: $(cat "$HANDOFF_IN_DIR/context.md")"; echo made > "$HANDOFF_OUT_DIR/made.txt"`));
  const s = await claude(a, [
    { tools: [{ name: "mcp__git-handoff__create_task", input: { objective: "say hello from m2", id: "via-claude", to: "codex@m2", context: "hello" } }], needs: "mcp__git-handoff__" },
    { tools: [{ name: "mcp__git-handoff__wait_task", input: { id: "via-claude" } }] },
    { text: "got it" },
  ], { trust: a });
  cost("claude", "MCP create_task to + wait_task across clones", s.run.ms);
  const [created, waited] = s.model.toolResults();
  assert.match(created!, /"to":\s*\{\s*"kind":\s*"codex",\s*"machine":\s*"m2"/, created);
  assert.match(waited!, /"final":\s*true/);
  assert.match(waited!, /B says: hello/);
  assert.match(waited!, new RegExp(`"path":\\s*"${join(a, "handoff-via-claude", "made.txt")}"`));
  assert.is(readFileSync(join(a, "handoff-via-claude", "made.txt"), "utf8"), "made\n");
  assert.is(await w.exited, 0, w.stderr());
});

test.run();
