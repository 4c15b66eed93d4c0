// The text view's file (.git/handoff/view-listing.json) holds each open task narrowed to what a
// view reads (core/view-task.ts): the text read from it is the text read from the whole records,
// with tasks that wait on others, a handoff, work in review and claims that ran out among them.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LISTING_AT } from "../src/store/record-cache-listing.ts";
import { VIEW_TASK_FIELDS } from "../src/core/view-task.ts";
import { cleanupTemp, cli } from "./support/repo.ts";
import { fixtureNow, viewsRepo, type ViewsFixture } from "./support/views-fixture.ts";

test.after(cleanupTemp);

const F: ViewsFixture = { tasks: LISTING_AT + 40, agents: 12, events: 2 * (LISTING_AT + 40), branches: 4 };

test("the view file's narrower records give the text the whole records give", () => {
  const repo = viewsRepo(F);
  const now = Date.parse(fixtureNow(F));
  const as = (agent: string, args: string[], ms = now) => {
    const r = cli(args, { cwd: repo, agent, env: { HANDOFF_NOW: new Date(ms).toISOString() } });
    assert.is(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
    return r;
  };
  const todo = (as("agent-000", ["task", "list", "--status", "todo", "--json"]).json as { id: string }[]).map((t) => t.id);
  assert.ok(todo.length >= 4, "the fixture has tasks to do");
  // One waits on another; one claimed long ago ran out; one handed over; one in review.
  as("lead", ["task", "add", "--id", "w", "--after", todo[0]!, "--", "waits on another"]);
  as("agent-001", ["claim", todo[1]!, "--ttl", "1m", "--over-capacity"], now - 3_600_000);
  as("agent-002", ["claim", todo[2]!, "--over-capacity"]);
  as("agent-002", ["handoff", todo[2]!, "--to", "agent-004", "--note", "over to you"]);
  as("lead", ["task", "add", "--id", "v", "--verify", "true", "--", "verified work"]);
  as("agent-003", ["claim", "v", "--over-capacity"]);
  as("agent-003", ["done", "v"]);

  const viewFile = join(repo, ".git/handoff/view-listing.json");
  rmSync(viewFile, { force: true });
  const views = () => [as("agent-000", ["status", "--no-conflicts"]).stdout, as("agent-000", ["status", "--no-conflicts", "--all"]).stdout];
  // The first view reads the whole records (and writes the file); the next ones read the file.
  const whole = views();
  const text = readFileSync(viewFile, "latin1");
  const body = JSON.parse(text.slice(text.indexOf("{")));
  // A build before the narrow records read version 4 as whole records (it would show a narrowed
  // task's missing fields as nothing): this file must be one it reads as no file.
  assert.ok(body.version > 4, `the view file's version ${body.version}`);
  for (const t of body.tasks) for (const k of Object.keys(t)) assert.ok((VIEW_TASK_FIELDS as readonly string[]).includes(k), `${t.id}: ${k} is not a view's field`);
  assert.ok(body.tasks.some((t: any) => t.after?.length) && body.tasks.some((t: any) => t.handoffs?.length) && body.tasks.some((t: any) => t.status === "review"));
  assert.equal(views(), whole);
  assert.match(whole[0]!, /expired \(free to claim\)/);
  assert.match(whole[0]!, /\nblocked\n {2}w waits on /);
  assert.match(whole[0]!, /\nreview\n {2}v {2}by agent-003/);
  assert.match(whole[0]!, /\ninbox  agent-004 1/);
});

test.run();
