// `status` judges drift only for agents that declared something (core/declaration.ts
// declaresAnything, asked before an agent's declaration is built), and measures an agent's
// committed work from the base of its earliest claim (store/drift.ts baseOf). An agent whose only
// declaration is a deliberate lease, or a claimed task's scope, is judged like one with session files.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, type CliResult } from "./support/repo.ts";
import { storeClaim, storeLease, storeSession, storeTasks, storeUnlease } from "./support/seed.ts";
import { commitFile, team } from "./support/team.ts";

test.after(cleanupTemp);

function ok(r: CliResult, what = "command"): CliResult {
  assert.is(r.code, 0, `${what}: ${r.stderr}`);
  return r;
}

const undeclared = (r: CliResult) => (r.json.drift.agents as { agent: string; undeclared: string[]; declared: string[] }[]).map((a) => `${a.agent}: ${a.undeclared.join(" ")} (declared ${a.declared.join(" ")})`);

test("an agent declared by a deliberate lease alone, or by a claimed task's scope alone, is judged", async () => {
  const t = team(["dave", "erin", "finn"]);
  // The sessions, dave's lease and erin's claimed task: written in-process (support/seed.ts).
  const as = (a: string) => ({ cwd: t.wt[a]!, agent: a });
  for (const a of ["dave", "erin", "finn"]) await storeSession(as(a), `${a}'s work`);
  await storeLease(as("dave"), ["config/app.json"]);
  await storeTasks(as("erin"), [{ id: "lib", objective: "the library", scope: ["lib/**"] }]);
  await storeClaim(as("erin"), "lib");
  // Its scope's lease released: the task's scope declares by itself.
  await storeUnlease(as("erin"), ["lib/**"]);
  // Each changes a file outside its declaration; finn declared nothing, so has nothing to drift from.
  for (const a of ["dave", "erin", "finn"]) {
    mkdirSync(join(t.wt[a]!, "docs"), { recursive: true });
    commitFile(t.wt[a]!, `docs/${a}.md`, "x\n");
  }
  const status = ok(t.as("dave", ["status", "--json", "--no-conflicts"]));
  assert.equal(undeclared(status), ["dave: docs/dave.md (declared config/app.json)", "erin: docs/erin.md (declared lib/**)"]);
  assert.match(ok(t.as("dave", ["status", "--no-conflicts"])).stdout, /\n {2}dave {2}docs\/dave\.md {2}\(declared config\/app\.json\)\n {2}erin {2}docs\/erin\.md {2}\(declared lib\/\*\*\)\n/);
});

test("an agent's committed work is measured from its earliest claim's base, however many it holds", async () => {
  const t = team(["gina"]);
  const wt = t.wt.gina!;
  // The session, the tasks and the claims: written in-process (support/seed.ts).
  const gina = { cwd: wt, agent: "gina" };
  await storeSession(gina, "two tasks", { files: ["src/**"] });
  await storeTasks(gina, [
    { id: "one", objective: "first", scope: ["src/one/**"] },
    { id: "two", objective: "second", scope: ["src/two/**"] },
  ]);
  const at = (ms: number) => ({ HANDOFF_NOW: new Date(Date.parse("2030-01-01T00:00:00.000Z") + ms).toISOString() });
  // Claimed in turn, work committed after each: the later claim's base is past the first commit.
  await storeClaim({ ...gina, now: at(0).HANDOFF_NOW }, "two", { ttl: "1d", overCapacity: true });
  commitFile(wt, "first.txt", "1\n");
  await storeClaim({ ...gina, now: at(60_000).HANDOFF_NOW }, "one", { ttl: "1d", overCapacity: true });
  commitFile(wt, "second.txt", "2\n");
  const status = ok(t.as("gina", ["status", "--json", "--no-conflicts"], at(120_000)));
  assert.equal(undeclared(status), ["gina: first.txt second.txt (declared src/** src/one/** src/two/**)"]);
});

test.run();
