// The negotiation channel end to end: two agents in linked worktrees, the real CLI and hooks. A
// release request reaches the holder's inbox and each context once; `answer --release` gives the
// task back with its leases in the answer's transaction and the requester learns it; `--keep
// --until` is shown to the requester. Refusals: ask-answer-refusals.test.ts.
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, type CliResult } from "./support/repo.ts";
import { askTeam, ok } from "./support/ask-team.ts";
import type { Team } from "./support/team.ts";

test.after(cleanupTemp);

const setup = askTeam;

function edit(t: Team, agent: string, file: string): CliResult {
  const dir = t.wt[agent]!;
  const payload = { session_id: `s-${agent}`, hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { file_path: join(dir, file), content: "x\n" }, cwd: dir };
  return runHook(t, agent, "claude-pre-tool-use", payload);
}

function runHook(t: Team, agent: string, name: string, payload: object): CliResult {
  return ok(cli(["hook", name], { cwd: t.wt[agent]!, agent, input: JSON.stringify(payload) }), name);
}

function context(r: CliResult): string {
  return r.json?.hookSpecificOutput?.additionalContext ?? "";
}

test("a refused claim suggests git handoff ask; the request reaches the holder's inbox, hook and SessionStart once each", async () => {
  const t = await setup();
  const refused = t.as("bob", ["claim", "api"]);
  assert.is(refused.code, 3);
  assert.match(refused.stderr, /negotiate: ask alice .*git handoff ask alice --release api/);

  const asked = ok(t.as("bob", ["ask", "alice", "--release", "api", "--reason", "I need the users route", "--json"]), "ask");
  const id: string = asked.json.id;
  assert.match(id, /^rq-[0-9a-z]{8}$/);
  assert.is(asked.json.task, "api");

  const inbox = ok(t.as("alice", ["inbox", "--json"])).json;
  const requests = inbox.filter((e: { kind: string }) => e.kind === "release_request");
  assert.is(requests.length, 1);
  assert.is(requests[0].id, id);
  assert.is(requests[0].reason, "I need the users route");
  const text = ok(t.as("alice", ["inbox"])).stdout;
  assert.match(text, new RegExp(`release request ${id} from bob`));
  assert.match(text, /\[untrusted: [^\]]*\]\n  reason:\n    \| I need the users route/);

  // The next hook answer tells it; the one after does not.
  const first = context(edit(t, "alice", "src/api/users.ts"));
  assert.match(first, new RegExp(`release request.*\\n.*${id} from bob`));
  assert.match(first, /\| I need the users route/);
  assert.not.match(context(edit(t, "alice", "src/api/users.ts")), new RegExp(id));
  // SessionStart: once as well.
  const start = (n: number) => runHook(t, "alice", "claude-session-start", { session_id: `s-alice-${n}`, hook_event_name: "SessionStart", cwd: t.wt.alice });
  assert.match(context(start(1)), new RegExp(`${id} from bob`));
  assert.not.match(context(start(2)), new RegExp(id));
  // Still in the inbox until answered.
  assert.is(ok(t.as("alice", ["inbox", "--json"])).json.filter((e: { kind: string }) => e.kind === "release_request").length, 1);
});

test("answer --release frees the task and its leases in one write; the requester learns it once", async () => {
  const t = await setup();
  const id = ok(t.as("bob", ["ask", "alice", "--release", "api", "--json"])).json.id;
  const answered = ok(t.as("alice", ["answer", id, "--release", "--reason", "all yours", "--json"]), "answer").json;
  assert.equal(answered.released, { task: "api", paths: [] });
  const task = ok(t.as("bob", ["task", "show", "api", "--json"])).json;
  assert.is(task.status, "todo");
  assert.is(task.claim, null);
  const leases = ok(t.as("bob", ["leases", "--json"])).json;
  const patterns = (Array.isArray(leases) ? leases : leases.leases).map((l: { pattern: string }) => l.pattern);
  assert.not.ok(patterns.includes("src/api/**"), `leases left: ${patterns}`);
  // The answer, the task's release and the leases' end are one transaction: each ref's new tip
  // names the same operation, and the request is gone from the holder's inbox.
  assert.match(gitOut(t.repo, "log", "-1", "--format=%s", "refs/handoff/log/alice"), new RegExp(`alice answers ${id} of bob: release`));
  assert.match(gitOut(t.repo, "log", "-1", "--format=%s", "refs/handoff/tasks/api"), /released api by alice/);
  assert.match(gitOut(t.repo, "log", "-1", "--format=%s", "refs/handoff/leases"), /unleased src\/api\/\*\*/);
  assert.is(ok(t.as("alice", ["inbox", "--json"])).json.filter((e: { kind: string }) => e.kind === "release_request").length, 0);

  const bobInbox = ok(t.as("bob", ["inbox", "--json"])).json.filter((e: { kind: string }) => e.kind === "release_answer");
  assert.is(bobInbox.length, 1);
  assert.is(bobInbox[0].answer.verdict, "release");
  assert.is(bobInbox[0].answer.reason, "all yours");
  const first = context(edit(t, "bob", "src/ui/app.ts"));
  assert.match(first, new RegExp(`request ${id} to alice \\(release task api\\): released`));
  assert.not.match(context(edit(t, "bob", "src/ui/app.ts")), new RegExp(id));
  ok(t.as("bob", ["claim", "api"]), "bob claims it now");

  const stats = ok(t.as("bob", ["stats", "--json"])).json;
  assert.is(stats.negotiation.asked, 1);
  assert.is(stats.negotiation.answered, 1);
  assert.is(stats.negotiation.released, 1);
  assert.is(stats.negotiation.time_to_answer.count, 1);
  assert.match(ok(t.as("bob", ["stats"])).stdout, /release requests +1 asked, 1 answered \(1 released, 0 kept\), 0 open/);
});

test("answer --keep --until is shown to the requester; a path request names the lease, and --release ends it", async () => {
  const t = await setup();
  const asked = ok(t.as("bob", ["ask", "alice", "--release", "docs/guide.md", "--json"])).json;
  assert.equal(asked.paths, ["docs/guide.md"]);
  assert.is(asked.task, null);
  const until = "2030-01-02T03:04:05.000Z";
  ok(t.as("alice", ["answer", asked.id, "--keep", "--until", until, "--reason", "half done"]));
  const text = ok(t.as("bob", ["inbox"])).stdout;
  assert.match(text, new RegExp(`request ${asked.id} to alice \\(release docs/guide.md\\): kept until ${until.replace(/\./g, "\\.")}`));
  assert.match(text, /\| half done/);
  // Kept: alice still holds it.
  const held = () => {
    const leases = ok(t.as("bob", ["leases", "--json"])).json;
    return (Array.isArray(leases) ? leases : leases.leases).some((l: { pattern: string; agent: string }) => l.pattern === "docs/guide.md" && l.agent === "alice");
  };
  assert.ok(held());
  // Asked again (for a path inside the lease, here the file itself) and released: the lease ends.
  const again = ok(t.as("bob", ["ask", "alice", "--release", "docs/guide.md", "--json"])).json;
  assert.equal(ok(t.as("alice", ["answer", again.id, "--release", "--json"])).json.released, { task: null, paths: ["docs/guide.md"] });
  assert.not.ok(held());
});

test("a path request answered --release where the path is a task's scope: the task goes with it, never a claim left without its lease", async () => {
  const t = await setup();
  const asked = ok(t.as("bob", ["ask", "alice", "--release", "src/api/users.ts", "--json"])).json;
  const answered = ok(t.as("alice", ["answer", asked.id, "--release", "--json"])).json;
  assert.equal(answered.released, { task: "api", paths: ["src/api/**"] });
  const api = ok(t.as("bob", ["task", "show", "api", "--json"])).json;
  assert.is(api.status, "todo", "released with its scope lease");
  assert.is(t.as("bob", ["check", "src/api/users.ts"]).code, 0);
  const leases = ok(t.as("bob", ["leases", "--json"])).json;
  assert.not.ok((Array.isArray(leases) ? leases : leases.leases).some((l: { task: string | null }) => l.task === "api"));
});

test.run();
