// The three-session demo from the seed texts, as a transcript: one session changes an endpoint,
// another writes its tests and waits for it, a third changes shared configuration. Success: the
// dependency is explicit, the API result is handed over once, and the shared-file collision is
// caught before review.
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempDir, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const FIXTURE = join(import.meta.dirname, "../fixtures/sample-service");

test("endpoint, tests and config in three worktrees: blocked edge, one handoff, collision caught, reviewed", () => {
  const repo = tempRepo();
  cpSync(FIXTURE, repo, { recursive: true });
  gitOut(repo, "add", "-A");
  gitOut(repo, "commit", "-q", "-m", "sample service");
  const root = tempDir("handoff-demo-");
  const wt = (name: string) => {
    const dir = join(root, name);
    gitOut(repo, "worktree", "add", "-q", "-b", name, dir, "main");
    return dir;
  };
  const api = wt("api");
  const tests = wt("tests");
  const config = wt("config");
  const run = (agent: string, cwd: string, args: string[]) => {
    const r = cli(args, { cwd, agent });
    assert.is(r.code, 0, `${agent}: git handoff ${args.join(" ")}\n${r.stderr}`);
    return r;
  };
  const edit = (dir: string, file: string, fn: (s: string) => string) => writeFileSync(join(dir, file), fn(readFileSync(join(dir, file), "utf8")));
  const commit = (dir: string, msg: string) => {
    gitOut(dir, "commit", "-q", "-am", msg);
    return gitOut(dir, "rev-parse", "HEAD");
  };

  // The lead plans the work; the dependency is an edge, not prose.
  run("lead", repo, ["task", "add", "add email to GET /users/:id", "--id", "email-api", "--verify", "node --test test/"]);
  run("lead", repo, ["task", "add", "test the email field", "--id", "email-tests", "--after", "email-api", "--verify", "node --test test/"]);
  run("lead", repo, ["task", "add", "turn on emailInResponses", "--id", "email-flag"]);

  run("api-agent", api, ["session", "start", "--objective", "add email to GET /users/:id", "--files", "src/**", "--files", "config/app.json"]);
  run("tests-agent", tests, ["session", "start", "--objective", "test the email field", "--files", "test/**", "--awaits", "email-api from api-agent"]);
  run("config-agent", config, ["session", "start", "--objective", "turn on emailInResponses", "--files", "config/app.json"]);
  run("api-agent", api, ["claim", "email-api"]);
  run("config-agent", config, ["claim", "email-flag"]);

  const blocked = cli(["claim", "email-tests"], { cwd: tests, agent: "tests-agent" });
  assert.is(blocked.code, 3);
  assert.match(blocked.stderr, /email-tests waits on email-api \(claimed by api-agent/);

  // Both the api and the config sessions touch config/app.json: the preview sees it first.
  edit(api, "src/server.js", (s) => s.replace("return { status: 200, body: { id: user.id, name: user.name } };", "const body = { id: user.id, name: user.name };\n  if (config.features.emailInResponses) body.email = user.email;\n  return { status: 200, body };"));
  edit(api, "config/app.json", (s) => s.replace('"logLevel": "info"', '"logLevel": "debug"'));
  const apiCommit = commit(api, "email in responses behind a flag");
  edit(config, "config/app.json", (s) => s.replace('"logLevel": "info"', '"logLevel": "warn"').replace('"emailInResponses": false', '"emailInResponses": true'));
  commit(config, "turn on emailInResponses");
  const preview = run("lead", repo, ["merge-preview", "--json"]).json;
  const hit = preview.pairs.find((p: any) => p.conflicts.length);
  assert.equal([hit.a.branch, hit.b.branch, hit.conflicts, hit.a.tasks, hit.b.tasks], ["api", "config", ["config/app.json"], ["email-api"], ["email-flag"]]);
  assert.match(run("lead", repo, ["status"]).stdout, /^conflicts: 1 conflict predicted: api \(api-agent\) x config \(config-agent\) on config\/app.json$/m);

  // The api session hands over once, with the contract and what changed, and submits for review.
  const h = run("api-agent", api, ["handoff", "email-api", "--contract", "GET /users/:id returns {id, name, email} when features.emailInResponses", "--verify", "node --test test/", "--question", "should email be opt-in per client?", "--json"]).json;
  assert.equal([h.id, h.commit, h.diff.files], ["email-api#1", apiCommit, 2]);
  const submitted = run("api-agent", api, ["done", "email-api", "--json"]).json;
  assert.equal([submitted.status, submitted.review.verification.passed], ["review", true]);
  assert.match(run("lead", repo, ["review", "accept", "email-api"]).stdout, /unblocked: email-tests; email-api#1 goes to whoever claims it/);

  // The tests session gets the work with the handoff, exactly once.
  const claimed = run("tests-agent", tests, ["ready", "--claim"]).stdout;
  assert.match(claimed, /claimed email-tests/);
  assert.match(claimed, /handoff email-api#1 from api-agent[\s\S]*\| GET \/users\/:id returns \{id, name, email\}/);
  gitOut(tests, "merge", "-q", "--no-edit", "api");
  edit(tests, "config/app.json", (s) => s.replace('"emailInResponses": false', '"emailInResponses": true'));
  edit(tests, "test/users.test.js", (s) => `${s}\ntest("email is returned when the flag is on", () => {\n  assert.equal(handle("GET", "/users/2").body.email, "grace@example.org");\n});\n`);
  commit(tests, "test the email field");
  run("tests-agent", tests, ["ack", "email-api#1"]);
  assert.equal(run("tests-agent", tests, ["inbox", "--json"]).json, []);
  const reviewed = run("tests-agent", tests, ["done", "email-tests", "--json"]).json;
  assert.equal([reviewed.status, reviewed.review.verification.passed], ["review", true]);
  assert.match(reviewed.review.verification.output_tail, /# pass 3/);

  const s = run("lead", repo, ["status", "--json", "--no-conflicts"]).json;
  assert.equal(s.review.map((r: any) => r.task), ["email-tests"]);
  assert.equal(s.blocked, []);
  assert.equal(s.roster.agents.map((a: any) => a.agent), ["api-agent", "config-agent", "tests-agent"]);
  const story = gitOut(repo, "log", "--format=%s", "refs/handoff/tasks/email-api").split("\n").reverse();
  assert.equal(story.map((l) => l.split(" ")[0]), ["created", "claimed", "handoff", "submitted", "accepted", "acked"]);
});

test.run();
