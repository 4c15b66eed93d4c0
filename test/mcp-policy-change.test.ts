// A running MCP server follows the repository's policy as it is committed: the policy in force is
// the .handoff.yaml on the integration branch (a worktree's own file may only make it stricter),
// so a change merged there while the server runs in another worktree takes effect at the
// server's next call, not at its restart hours later. Here max_concurrent goes from 2 to 1.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, gitOut, repoWithPolicy } from "./support/repo.ts";
import { inProcess } from "./support/mcp.ts";

test.after(cleanupTemp);

test("a policy committed to the integration branch while the server runs applies to its next call", async () => {
  const { repo, worktree: feature } = repoWithPolicy("max_concurrent: 2\n");
  const h = await inProcess(feature, { agent: "alice" });
  try {
    for (const id of ["p1", "p2", "p3"]) await h.ok("create_task", { objective: `do ${id}`, id });
    await h.ok("claim_task", { id: "p1" });
    await h.ok("claim_task", { id: "p2" });
    await h.ok("release_task", { id: "p2" });

    // Merged on main from the main worktree; the server's worktree and its file are untouched.
    writeFileSync(join(repo, ".handoff.yaml"), "max_concurrent: 1\n");
    gitOut(repo, "commit", "-q", "-am", "policy: one at a time");
    const refused = await h.refused("claim_task", { id: "p3" });
    assert.is(refused.code, "at_capacity", JSON.stringify(refused));
    assert.is(refused.data.capacity, 1);
  } finally {
    await h.close();
  }
});

test("a committed policy that does not parse is told in every answer while it stands, as the CLI says it at every command", async () => {
  const { repo, worktree: feature } = repoWithPolicy("max_concurrent: 2\n");
  const h = await inProcess(feature, { agent: "alice" });
  try {
    assert.is((await h.ok("list_tasks")).notices, undefined, "a sound policy: nothing to tell");
    writeFileSync(join(repo, ".handoff.yaml"), "max_concurrent: [\n");
    gitOut(repo, "commit", "-q", "-am", "policy: typo");
    for (let i = 0; i < 2; i++) {
      const r = await h.call("list_tasks", {});
      const notices = (r.structuredContent as { notices?: string[] }).notices ?? [];
      assert.is(notices.length, 1, JSON.stringify(r.structuredContent));
      assert.match(notices[0]!, /the \.handoff\.yaml at main \(\w+\) does not parse .*; using the one at \w+, the last that does: fix it on main/);
      assert.match((r.content as { text: string }[])[0]!.text, /\nnotice: the \.handoff\.yaml at main/);
    }
  } finally {
    await h.close();
  }
});

test.run();
