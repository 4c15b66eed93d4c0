// Refs written in a record format newer than this build reads. A record from a newer git-handoff
// read in this very clone has its own code, newer_format, and doctor reports it as one check.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { commit, setRef, tree } from "./support/forge.ts";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

type Result = ReturnType<typeof cli>;
const ok = (r: Result) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r;
};

test("a lease set written by a newer git-handoff in this clone: code newer_format, and doctor reports it as one failed check and goes on", () => {
  const repo = tempRepo();
  ok(cli(["lease", "x.ts"], { cwd: repo, agent: "a" }));
  const tip = gitOut(repo, "rev-parse", "refs/handoff/leases");
  const t = tree(repo, { format: "git-handoff 4\n", leases: { tree: tree(repo, { "x.json": "{}\n" }) } });
  setRef(repo, "refs/handoff/leases", commit(repo, { tree: t, parent: tip, author: "a", message: "x\n" }));
  const c = cli(["check", "x.ts", "--json"], { cwd: repo, agent: "b" });
  assert.is(c.code, 3);
  assert.is(c.json.error.code, "newer_format");
  assert.match(c.json.error.message, /refs\/handoff\/leases was written by a newer git-handoff/);
  const d = cli(["doctor", "--json"], { cwd: repo, agent: "b" });
  assert.is(d.code, 2, d.stderr);
  const checks = d.json.checks as { name: string; status: string; detail: string }[];
  const failed = checks.filter((x) => x.status === "fail");
  assert.equal(failed.map((x) => x.name), ["newer-format"]);
  assert.match(failed[0]!.detail, /refs\/handoff\/leases was written by a newer git-handoff .*not checked: leases/);
  for (const name of ["tentative", "invariants", "dependencies", "format", "objects"]) assert.ok(checks.some((x) => x.name === name), `${name} still runs`);
});

test.run();
