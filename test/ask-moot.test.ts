// A release request whose target the holder gave up by other means (release, done, expiry) is
// moot: it leaves the holder's inbox and is not delivered to its context; stats still count it.
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, type CliResult } from "./support/repo.ts";
import { team } from "./support/team.ts";

test.after(cleanupTemp);

function ok(r: CliResult, what = "command"): CliResult {
  assert.is(r.code, 0, `${what}: ${r.stderr}`);
  return r;
}

test("a request for a task its holder released anyway is moot", () => {
  const t = team(["alice", "bob"]);
  ok(t.as("alice", ["session", "start", "--objective", "the api", "--files", "src/api/**"]));
  ok(t.as("alice", ["task", "add", "--id", "api", "--scope", "src/api/**", "--", "build the api"]));
  ok(t.as("alice", ["claim", "api"]));
  const id = ok(t.as("bob", ["ask", "alice", "--release", "api", "--json"])).json.id;
  const asked = () => ok(t.as("alice", ["inbox", "--json"])).json.filter((e: { kind: string }) => e.kind === "release_request").map((e: { id: string }) => e.id);
  assert.equal(asked(), [id]);
  ok(t.as("alice", ["release", "api"]));
  assert.equal(asked(), []);
  const dir = t.wt.alice!;
  const payload = { session_id: "s", hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { file_path: join(dir, "src/api/x.ts"), content: "x\n" }, cwd: dir };
  const r = ok(cli(["hook", "claude-pre-tool-use"], { cwd: dir, agent: "alice", input: JSON.stringify(payload) }));
  assert.not.match(r.stdout, new RegExp(id));
  assert.is(ok(t.as("bob", ["stats", "--json"])).json.negotiation.open, 1);
});

test.run();
