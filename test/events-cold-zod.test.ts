// A cold `events` answered from the event index sets up no zod (scripts/lazy-zod.mjs): its help
// and its check of --type read the event types from EVENT_TYPES, the list the schema is built from,
// where they read the schema's options, which set zod up (~150 KB of the young generation and a
// collection, before its answer). zod marks its setting up with globalThis.__zod_globalConfig.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { EVENT_TYPES, EventType } from "../src/core/event.ts";
import { cleanupTemp, cli, tempRepo } from "./support/repo.ts";
import { zodProbed as probed } from "./support/cold-probe.ts";

test.after(cleanupTemp);

test("the event types are the schema's", () => {
  assert.equal([...EventType.options], [...EVENT_TYPES]);
});

test("a cold events answered from the index sets up no zod, and an unknown type is refused naming the types", () => {
  const repo = tempRepo();
  for (const id of ["t1", "t2"]) assert.is(cli(["task", "add", `work ${id}`, "--id", id], { cwd: repo, agent: "a1" }).code, 0);
  assert.is(cli(["claim", "t1"], { cwd: repo, agent: "a1" }).code, 0);
  assert.is(cli(["events"], { cwd: repo, agent: "a2" }).code, 0); // the index built
  for (const args of [["events", "--agent", "a1", "--limit", "2"], ["events", "--type", "claimed"], ["events", "--help"]]) {
    const r = probed(repo, args);
    assert.is(r.status, 0, `${args.join(" ")}: ${r.stderr}`);
    assert.is(r.zod, false, `${args.join(" ")} set up zod`);
    if (args[1] === "--type") assert.match(r.stdout, /claimed\s+t1\s+a1/);
    if (args[1] === "--help") assert.ok(r.stdout.replace(/\s+/g, " ").includes(`only this type, one of: ${EVENT_TYPES.join(", ")} --limit`), r.stdout);
  }
  const bad = probed(repo, ["events", "--type", "nope"]);
  assert.is(bad.status, 2);
  assert.match(bad.stderr, new RegExp(`unknown event type "nope": use one of ${EVENT_TYPES.slice(0, 12).join(", ")}, … \\(all ${EVENT_TYPES.length}: git handoff help events\\)`));
});

test.run();
