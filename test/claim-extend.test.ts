// Claims stay alive while work goes on: the holder's handoff, lease in scope, hook-seen edit in
// scope and heartbeat extend the claim once a third of its time has passed, and only then.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli } from "./support/repo.ts";
import { MIN, team } from "./support/team.ts";

test.after(cleanupTemp);

const T0 = Date.parse("2026-06-01T10:00:00.000Z");
const at = (ms: number) => ({ HANDOFF_NOW: new Date(T0 + ms).toISOString() });
const iso = (ms: number) => new Date(T0 + ms).toISOString();

test("handoff, lease in scope, hook edit in scope and heartbeat extend the claim and its scope leases; other writes do not", () => {
  const t = team(["alice", "bob"]);
  assert.is(t.as("lead", ["task", "add", "work", "--id", "w", "--scope", "src/w/**"], at(0)).code, 0);
  assert.is(t.as("alice", ["claim", "w"], at(0)).code, 0);
  const expiry = () => t.as("lead", ["task", "show", "w", "--json"], at(0)).json.claim.expires_at as string;
  const scopeExpiry = () => (t.as("lead", ["leases", "--json"], at(0)).json as { pattern: string; expires_at: string }[]).find((l) => l.pattern === "src/w/**")!.expires_at;

  // A handoff by the holder renews the claim in its own commit, and the scope lease follows.
  assert.is(t.as("alice", ["handoff", "w", "--note", "halfway"], at(5 * MIN)).code, 0);
  assert.is(expiry(), iso(35 * MIN));
  assert.is(scopeExpiry(), iso(35 * MIN), "the scope lease follows the claim");

  // An edit inside the scope, seen by the pre-edit hook.
  const payload = (file: string) =>
    JSON.stringify({ session_id: "s1", cwd: t.wt.alice, hook_event_name: "PreToolUse", tool_name: "Edit", tool_input: { file_path: `${t.wt.alice}/${file}`, old_string: "a", new_string: "b" } });
  const early = cli(["hook", "claude-pre-tool-use"], { cwd: t.wt.alice!, agent: "alice", input: payload("src/w/a.ts"), env: at(10 * MIN) });
  assert.is(early.code, 0, early.stderr);
  assert.is(expiry(), iso(35 * MIN), "an edit before the threshold costs no write");
  const outside = cli(["hook", "claude-pre-tool-use"], { cwd: t.wt.alice!, agent: "alice", input: payload("README.md"), env: at(20 * MIN) });
  assert.is(outside.code, 0, outside.stderr);
  assert.is(expiry(), iso(35 * MIN), "an edit outside the scope is not work on the task");
  const inside = cli(["hook", "claude-pre-tool-use"], { cwd: t.wt.alice!, agent: "alice", input: payload("src/w/a.ts"), env: at(20 * MIN) });
  assert.is(inside.code, 0, inside.stderr);
  assert.is(expiry(), iso(50 * MIN));
  assert.is(scopeExpiry(), iso(50 * MIN));

  // A lease outside the scope does not extend; one inside does.
  assert.is(t.as("alice", ["lease", "notes.md"], at(35 * MIN)).code, 0);
  assert.is(expiry(), iso(50 * MIN));
  assert.is(t.as("alice", ["lease", "src/w/b.ts"], at(35 * MIN)).code, 0);
  assert.is(expiry(), iso(65 * MIN));

  // Bob's writes never extend alice's claim.
  assert.is(t.as("bob", ["lease", "src/w/c.ts"], at(55 * MIN)).code, 0);
  assert.is(expiry(), iso(65 * MIN));

  // The holder's heartbeat.
  assert.is(t.as("alice", ["heartbeat"], at(55 * MIN)).code, 0);
  assert.is(expiry(), iso(85 * MIN));
  const events = t.as("lead", ["events", "--task", "w", "--type", "renewed", "--json"], at(55 * MIN)).json as unknown[];
  assert.is(events.length, 3, "each extension by activity is a renewed event");
});

test.run();
