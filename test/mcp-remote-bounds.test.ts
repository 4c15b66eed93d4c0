// MCP tools answer before the client gives up: a claim through a remote that hangs comes back as
// a `remote_timeout` result, and a refusing remote as `remote_rejected`, over the real stdio server.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp } from "./support/repo.ts";
import { remoteHook, servedProject } from "./support/servers.ts";
import { overStdio } from "./support/mcp.ts";

test.after(cleanupTemp);

test("claim_task through a hanging remote: a remote_timeout result within the deadline; a refusing remote: remote_rejected", async () => {
  const { bare, a } = servedProject();
  const mcp = await overStdio(a, { agent: "alice", env: { HANDOFF_REMOTE_TIMEOUT_MS: "1500" } });
  try {
    remoteHook(bare, "pre-receive", "sleep 53.5");
    const start = Date.now();
    const slow = await mcp.refused("claim_task", { id: "ship" });
    assert.is(slow.code, "remote_timeout");
    assert.is(slow.recoverable, true);
    assert.ok(Date.now() - start < 1500 + 5000, `answered after ${Date.now() - start} ms`);

    remoteHook(bare, "pre-receive", `echo "no coordination refs here" >&2; exit 1`);
    const refused = await mcp.refused("claim_task", { id: "ship" });
    assert.is(refused.code, "remote_rejected");
    assert.match(refused.message, /no coordination refs here/);
  } finally {
    await mcp.close();
  }
});

test.run();
