// The files an agent sends through a tool are read only inside the repository: create_task's and
// complete_task's `files` are pushed to the sync remote, and an agent that can only call tools could
// otherwise send /etc/passwd, a file through a symlink out of the repository, or .git/config (the
// credentials in its remote URLs). Each is refused as invalid_input, and nothing is written. The
// files a session declares are held to the task scopes' rules.
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, handoffRefs, tempDir, tempRepo } from "./support/repo.ts";
import { inProcess } from "./support/mcp.ts";

test.after(cleanupTemp);

test("create_task and complete_task send files from inside the repository only", async () => {
  const repo = tempRepo();
  const outside = tempDir("handoff-outside-");
  writeFileSync(join(outside, "secret.txt"), "not for the remote\n");
  symlinkSync(outside, join(repo, "out"));
  mkdirSync(join(repo, "data"));
  writeFileSync(join(repo, "data", "in.csv"), "x,y\n");
  const mcp = await inProcess(repo, { agent: "alice" });
  try {
    const bad = ["/etc/passwd", join(outside, "secret.txt"), "out/secret.txt", "../secret.txt", ".git/config", "data/../../x"];
    for (const path of bad) {
      const before = handoffRefs(repo);
      const refused = await mcp.refused("create_task", { objective: "o", to: "codex", files: [path] });
      assert.is(refused.code, "invalid_input", path);
      assert.match(refused.message, /outside the repository|inside \.git|symlink/, `${path}: ${refused.message}`);
      assert.is(handoffRefs(repo), before, `${path}: nothing written`);
    }
    const sent = await mcp.ok("create_task", { objective: "o", to: "codex", files: ["data/in.csv"] });
    assert.equal(sent.files, [{ name: "in.csv", size: 4 }], "a file of the repository goes as before");

    assert.is(cli(["task", "add", "result wanted", "--id", "r1"], { cwd: repo, agent: "lead" }).code, 0);
    await mcp.ok("claim_task", { id: "r1" });
    for (const path of ["/etc/hostname", "out/secret.txt", ".git/config"]) {
      const before = handoffRefs(repo);
      const refused = await mcp.refused("complete_task", { id: "r1", output: "done", files: [path] });
      assert.is(refused.code, "invalid_input", path);
      assert.is(handoffRefs(repo), before, `${path}: nothing written`);
    }
    const done = await mcp.ok("complete_task", { id: "r1", output: "done", files: ["data/in.csv"] });
    assert.is(done.task.status, "done");
  } finally {
    await mcp.close();
  }
});

test("the files a session plans to change are read as task scopes are: inside the repository, printable", async () => {
  const repo = tempRepo();
  const mcp = await inProcess(repo, { agent: "alice" });
  try {
    for (const files of [["/etc/passwd"], ["../x"], [".git/config"], ["a\u0000b"], ["ok/**", "x\u0001"]]) {
      const before = handoffRefs(repo);
      const refused = await mcp.refused("declare_session", { objective: "o", files });
      assert.is(refused.code, "invalid_input", JSON.stringify(files));
      assert.is(handoffRefs(repo), before, `${JSON.stringify(files)}: nothing written`);
    }
    await mcp.ok("declare_session", { objective: "o", files: ["./src/api/**", "docs/"] });
    const shown = cli(["agents", "--json"], { cwd: repo, agent: "lead" }).json;
    assert.equal(shown.agents.find((a: { agent: string }) => a.agent === "alice").files, ["src/api/**", "docs/**"]);
  } finally {
    await mcp.close();
  }
});

test.run();
