// request_release and answer_request over MCP: the same store calls as `ask` and `answer`, with
// refusals and texts in tool words (answer_request, not git handoff answer).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp } from "./support/repo.ts";
import { askTeam } from "./support/ask-team.ts";
import { inProcess } from "./support/mcp.ts";

test.after(cleanupTemp);

const setup = askTeam;

test("MCP request_release and answer_request do the same, refusals in tool words", async () => {
  const t = await setup();
  const bob = await inProcess(t.wt.bob!, { agent: "bob" });
  const alice = await inProcess(t.wt.alice!, { agent: "alice" });
  try {
    const held = await bob.refused("claim_task", { id: "api" });
    assert.ok(held.suggestions.some((s: { detail: string }) => /request_release \{"agent": "alice", "release": "api"\}/.test(s.detail)), JSON.stringify(held.suggestions));
    const unknown = await bob.refused("request_release", { agent: "nobody", release: "api" });
    assert.is(unknown.code, "not_found");
    const sent = await bob.ok("request_release", { agent: "alice", release: "api", reason: "please" });
    const id = sent.request.id;
    const box = await alice.ok("inbox");
    assert.is(box.requests.length, 1);
    assert.is(box.requests[0].id, id);
    const boxText = await alice.call("inbox");
    const shown = (boxText.content as { text: string }[]).map((c) => c.text).join("\n");
    assert.match(shown, new RegExp(`answer: answer_request \\{"request": "${id}", "answer": "release"\\}`));
    assert.not.match(shown, /git handoff answer/);
    const ctx = await alice.call("load_context");
    assert.match((ctx.content as { text: string }[]).map((c) => c.text).join("\n"), new RegExp(`release request ${id} from bob`));
    assert.ok((ctx.structuredContent as { next: { tool: string }[] }).next.some((n) => n.tool === "answer_request"));
    const other = await bob.refused("answer_request", { request: id, answer: "release" });
    assert.is(other.code, "not_holder");
    const done = await alice.ok("answer_request", { request: id, answer: "release" });
    assert.equal(done.released, { task: "api", paths: [] });
    const mine = await bob.ok("inbox");
    assert.is(mine.requests[0].kind, "release_answer");
  } finally {
    await bob.close();
    await alice.close();
  }
});

test.run();
