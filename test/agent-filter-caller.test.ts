// `events --agent X` and `leases --agent X` filter by X: the caller is still whoever runs them
// ($HANDOFF_AGENT, or --agent before the verb). Read as the caller, the filter used to refresh
// X's heartbeat, so looking at a silent agent's events made it look alive.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const T0 = Date.parse("2026-11-30T10:00:00.000Z");
const at = (min: number) => ({ HANDOFF_NOW: new Date(T0 + min * 60_000).toISOString() });

test("a filter by agent reads as the caller and leaves the filtered agent's heartbeat alone", () => {
  const repo = tempRepo();
  assert.is(cli(["session", "start", "--objective", "quiet work"], { cwd: repo, agent: "silent", env: at(0) }).code, 0);
  const ref = () => gitOut(repo, "rev-parse", "refs/handoff/agents/silent");
  const before = ref();
  for (const args of [["events", "--agent", "silent"], ["leases", "--agent", "silent"]]) {
    const r = cli([...args, "--json"], { cwd: repo, agent: "looker", env: at(90) });
    assert.is(r.code, 0, r.stderr);
    assert.is(ref(), before, `${args[0]} left silent's record as it was`);
  }
  const events = cli(["events", "--agent", "silent", "--json"], { cwd: repo, agent: "looker", env: at(90) }).json;
  assert.ok(events.length > 0 && events.every((e: { agent: string }) => e.agent === "silent"), "the filter still filters");
  // Named before the verb, --agent is the caller: silent itself looking refreshes its heartbeat.
  assert.is(cli(["--agent", "silent", "events", "--agent", "silent"], { cwd: repo, env: at(90) }).code, 0);
  assert.is.not(ref(), before);
});

test.run();
