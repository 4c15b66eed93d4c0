// The team the ask/answer tests share: alice holds task api (scope src/api/**) and a lease on
// docs/guide.md; bob declared src/ui/**. Each in its own linked worktree (team.ts). The sessions,
// the task, its claim and the lease are written in-process (seed.ts): what the tests ask about
// comes after them.
import * as assert from "uvu/assert";
import type { CliResult } from "./repo.ts";
import { storeClaim, storeLease, storeSession, storeTasks } from "./seed.ts";
import { team, type Team } from "./team.ts";

export function ok(r: CliResult, what = "command"): CliResult {
  assert.is(r.code, 0, `${what}: ${r.stderr}`);
  return r;
}

export async function askTeam(): Promise<Team> {
  const t = team(["alice", "bob"]);
  const alice = { cwd: t.wt.alice!, agent: "alice" };
  await storeSession(alice, "the api", { files: ["src/api/**"] });
  await storeSession({ cwd: t.wt.bob!, agent: "bob" }, "the ui", { files: ["src/ui/**"] });
  await storeTasks(alice, [{ id: "api", objective: "build the api", scope: ["src/api/**"] }]);
  await storeClaim(alice, "api");
  await storeLease(alice, ["docs/guide.md"]);
  return t;
}
