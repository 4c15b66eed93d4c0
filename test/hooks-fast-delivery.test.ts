// The fast path and release requests: requests arrive on the requester's log ref, which the fast
// path's cache is not keyed by, so a cache answers edits for 30 s after it was compiled and then
// hands one edit to the full hook, which delivers the request in its context.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanEnv, cleanupTemp, type CliResult } from "./support/repo.ts";
import { FAST_HOOK } from "./support/hook-runner.ts";
import { team, type Team } from "./support/team.ts";

test.after(cleanupTemp);

function ok(r: CliResult, what = "command"): CliResult {
  assert.is(r.code, 0, `${what}: ${r.stderr}`);
  return r;
}

/** alice edits `file` through the fast path; `why` is the fast path's reason to hand over, if any. */
function edit(t: Team, file: string): { code: number; context: string; why: string } {
  const dir = t.wt.alice!;
  const payload = { session_id: "s-alice", hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { file_path: join(dir, file), content: "x\n" }, cwd: dir };
  const r = spawnSync(FAST_HOOK, ["claude-pre-tool-use"], { cwd: dir, env: cleanEnv({ HANDOFF_AGENT: "alice", HANDOFF_FAST_HOOK_WHY: "1" }), input: JSON.stringify(payload), encoding: "utf8" });
  let context = "";
  try {
    context = JSON.parse(r.stdout).hookSpecificOutput?.additionalContext ?? "";
  } catch {
    /* no answer: no objection */
  }
  return { code: r.status ?? 1, context, why: /full hook: (.*)/.exec(r.stderr)?.[1] ?? "" };
}

test("a request reaches a holder whose edits the fast path answers, once the cache is 30 s old", () => {
  const t = team(["alice", "bob"]);
  ok(t.as("alice", ["session", "start", "--objective", "the guide", "--files", "docs/**"]));
  ok(t.as("alice", ["lease", "docs/guide.md"]));
  assert.is(edit(t, "docs/guide.md").code, 0); // the full hook compiles the cache
  const fast = edit(t, "docs/guide.md");
  assert.is(fast.code, 0);
  assert.is(fast.why, "", "a fresh cache answers without Node");

  const id: string = ok(t.as("bob", ["ask", "alice", "--release", "docs/guide.md", "--reason", "typo fix", "--json"])).json.id;
  const still = edit(t, "docs/guide.md");
  assert.is(still.why, "", "within the bound the cache still answers");
  assert.is(still.context, "");

  // The cache's delivery bound passed (as it does 30 s after it was compiled).
  const gitDir = spawnSync("git", ["rev-parse", "--path-format=absolute", "--git-dir"], { cwd: t.wt.alice!, encoding: "utf8" }).stdout.trim();
  const dir = join(gitDir, "handoff/fast-hook");
  for (const f of readdirSync(dir)) writeFileSync(join(dir, f), readFileSync(join(dir, f), "utf8").replace(/\ndeliver\t\d+\n/, "\ndeliver\t0\n"));
  const handed = edit(t, "docs/guide.md");
  assert.is(handed.code, 0);
  assert.is(handed.why, "release requests are looked for");
  assert.match(handed.context, new RegExp(id), "the full hook delivered the request");
  const after = edit(t, "docs/guide.md");
  assert.is(after.why, "", "the full hook compiled a fresh cache");
  assert.is(after.context, "", "delivered once");
});

test.run();
