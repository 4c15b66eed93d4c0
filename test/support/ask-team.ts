// The team the ask/answer tests share: alice holds task api (scope src/api/**) and a lease on
// docs/guide.md; bob declared src/ui/**. Each in its own linked worktree (team.ts).
import * as assert from "uvu/assert";
import type { CliResult } from "./repo.ts";
import { team, type Team } from "./team.ts";

export function ok(r: CliResult, what = "command"): CliResult {
  assert.is(r.code, 0, `${what}: ${r.stderr}`);
  return r;
}

export function askTeam(): Team {
  const t = team(["alice", "bob"]);
  ok(t.as("alice", ["session", "start", "--objective", "the api", "--files", "src/api/**"]));
  ok(t.as("bob", ["session", "start", "--objective", "the ui", "--files", "src/ui/**"]));
  ok(t.as("alice", ["task", "add", "--id", "api", "--scope", "src/api/**", "--", "build the api"]));
  ok(t.as("alice", ["claim", "api"]));
  ok(t.as("alice", ["lease", "docs/guide.md"]));
  return t;
}
