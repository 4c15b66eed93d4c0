// From Codex (the real client, scripted model) through MCP: clone A's agent hands a task to clone
// B with create_task `to`, then wait_task returns what B's worker sent back and saves its files.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { codex, cost } from "./agents/clients.ts";
import { cli } from "./support/repo.ts";
import { remoteForFile, POLL, script, start } from "./support/handover.ts";

const net = remoteForFile(test, "mcp-handover-codex");

test("from Codex: create_task with to, then wait_task returns B's output and files", async () => {
  const a = net.clone("m1");
  const b = net.clone("m2");
  assert.is(cli(["init", "--write"], { cwd: a, agent: "lead" }).code, 0);
  const w = start(["worker", "--exec", script(`echo "m2 did: $HANDOFF_TASK_ID"; echo ok > "$HANDOFF_OUT_DIR/ok.txt"`), "--once", "--poll", POLL], { cwd: b, agent: "claude@m2" });
  // A slug Codex has no metadata for lists MCP tools directly (a known one defers them to tool_search).
  const s = await codex(a, [
    { tools: [{ name: "mcp__git_handoff/create_task", input: { objective: "do it on m2", id: "via-codex", to: "claude@m2" } }], needs: "mcp__git_handoff" },
    { tools: [{ name: "mcp__git_handoff/wait_task", input: { id: "via-codex" } }] },
    { text: "done" },
  ], { model: "scripted-model" });
  cost("codex", "MCP create_task to + wait_task across clones", s.run.ms);
  const [created, waited] = s.model.toolResults();
  assert.match(created!, /"to":\{"kind":"claude","machine":"m2"\}/, created);
  assert.match(waited!, /"final":true/, waited);
  assert.match(waited!, /m2 did: via-codex/);
  assert.is(readFileSync(join(a, "handoff-via-codex", "ok.txt"), "utf8"), "ok\n");
  assert.is(await w.exited, 0, w.stderr());
});

test.run();
