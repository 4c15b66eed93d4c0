// Result files never land through a link nobody named, nor inside a git dir. A collaborator
// commits the link `handoff-t-evil -> .git`, the victim pulls it (ordinary work), and the
// collaborator's worker finishes task t-evil with a result file named `config` holding a
// core.fsmonitor command: `wait --id t-evil` and MCP `wait_task` used to save it over .git/config,
// and the next git command ran it.
import { mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cli, gitOut, handoffRefs, tempRepo } from "./support/repo.ts";
import { remoteForFile, onceWorker, script } from "./support/handover.ts";
import { inProcess } from "./support/mcp.ts";

const net = remoteForFile(test, "results-folder");

const EVIL_CONFIG = `[core]\n\tbare = false\n\tfsmonitor = "echo ran >> pwned; false"\n`;

/** The victim's clone, holding the collaborator's link, and the finished task `id` whose result is a file `config`. */
async function world(id: string): Promise<string> {
  const victim = net.clone("m1");
  const attacker = net.clone("m2");
  symlinkSync(".git", join(attacker, `handoff-${id}`));
  gitOut(attacker, "add", `handoff-${id}`);
  gitOut(attacker, "commit", "-qm", "a convenience link");
  gitOut(attacker, "push", "-q", "origin", "main");
  gitOut(victim, "pull", "-q");
  assert.is(cli(["task", "add", "results for you", "--id", id, "--push"], { cwd: attacker, agent: "mallory" }).code, 0);
  const w = onceWorker(attacker, script(`cat > "$HANDOFF_OUT_DIR/config" <<'Y'\n${EVIL_CONFIG}Y\necho done`));
  assert.is(await w.exited, 0, w.stderr());
  return victim;
}

test("wait --id: a checked-out link at handoff-<id> is refused, never followed (exit 2, .git/config untouched, no ref moved)", async () => {
  const victim = await world("t-evil");
  const config = readFileSync(join(victim, ".git", "config"), "utf8");
  const refs = handoffRefs(victim);
  const r = cli(["wait", "--id", "t-evil"], { cwd: victim, agent: "vic" });
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, /^git-handoff: cannot save result files to \S+\/handoff-t-evil: it is a symbolic link \(a link is followed only for a folder named with --out\) \[invalid_input\]\n/);
  assert.is(readFileSync(join(victim, ".git", "config"), "utf8"), config);
  assert.is(handoffRefs(victim), refs);
  // Named with --out, the same link is followed, to the git dir: refused all the same.
  const named = cli(["wait", "--id", "t-evil", "--out", "handoff-t-evil"], { cwd: victim, agent: "vic" });
  assert.is(named.code, 2, named.stderr);
  assert.match(named.stderr, /^git-handoff: --out handoff-t-evil: it is inside the git dir \S+\.git \(/);
  // A link on the way (-C through a link in the worktree) is refused as well.
  mkdirSync(join(victim, "real"));
  symlinkSync("real", join(victim, "docs"));
  const through = cli(["-C", join(victim, "docs"), "wait", "--id", "t-evil"], { cwd: victim, agent: "vic" });
  assert.is(through.code, 2, through.stderr);
  assert.match(through.stderr, /cannot save result files to \S+\/docs\/handoff-t-evil: \S+\/docs is a symbolic link/);
  assert.is(readFileSync(join(victim, ".git", "config"), "utf8"), config);
  // The result was there to save all along: a folder of the user's gets it.
  const saved = cli(["wait", "--id", "t-evil", "--out", "got"], { cwd: victim, agent: "vic" });
  assert.is(saved.code, 0, saved.stderr);
  assert.is(readFileSync(join(victim, "got", "config"), "utf8"), EVIL_CONFIG);
});

test("MCP wait_task: the same link is refused (invalid_input), .git/config untouched", async () => {
  const victim = await world("t-evil2");
  const config = readFileSync(join(victim, ".git", "config"), "utf8");
  const mcp = await inProcess(victim, { agent: "vic", waitBoundMs: 20_000 });
  try {
    const err = await mcp.refused("wait_task", { id: "t-evil2" });
    assert.is(err.code, "invalid_input", JSON.stringify(err));
    assert.match(err.message, /handoff-t-evil2: it is a symbolic link/);
  } finally {
    await mcp.close();
  }
  assert.is(readFileSync(join(victim, ".git", "config"), "utf8"), config);
});

test("wait --out inside a git dir (.git/x, or through a link of the user's) is refused before a task is created", () => {
  const repo = tempRepo();
  symlinkSync(".git/hooks", join(repo, "mine"));
  for (const [out, why] of [
    [".git/results", "it is inside a .git folder"],
    ["mine", "it is inside the git dir"],
  ] as const) {
    const r = cli(["wait", "--objective", "x", "--timeout", "1s", "--out", out], { cwd: repo, agent: "vic" });
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, `git-handoff: --out ${out}: ${why}`);
    assert.is(r.stderr.trim().split("\n").length, 1, r.stderr);
  }
  assert.is(handoffRefs(repo), "");
});

test.run();
