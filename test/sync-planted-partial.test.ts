// A ref planted on the sync remote under a name no git-handoff writes (`refs/handoff/leases/x`)
// makes git refuse any push of the ref whose folder it fakes (`refs/handoff/leases`). That must
// hold back that ref only: sync pushes and fetches everything else, names what it held back, what
// stands in its way and the command that removes it, and exits with `quarantined`'s status so a
// script notices. A write that needs the blocked ref is refused at once; one that does not goes
// through. After `sync --repair`, everything goes out. Over a remote by path (pushed in process)
// and over smart HTTP (in process too, by another route).
import { renameSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { EXIT_CODES } from "../src/core/errors.ts";
import { commit, tree } from "./support/forge.ts";
import { inProcess } from "./support/mcp.ts";
import { cleanupTemp, cli, gitOut, succeeded } from "./support/repo.ts";
import { storeClaimOffline, storeTasks } from "./support/seed.ts";
import { cloneOf, emptyRemote, serveRoot, startHttp, type GitServer } from "./support/servers.ts";

const servers: GitServer[] = [];
test.after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  cleanupTemp();
});

const ok = succeeded;
const LEASES = "refs/handoff/leases";
const PLANTED = "refs/handoff/leases/x";

/** The remote's refs under refs/handoff/, read as any client would: `git ls-remote`. */
function lsRemote(cwd: string): Map<string, string> {
  const out = gitOut(cwd, "ls-remote", "origin", "refs/handoff/*");
  return new Map(out.split("\n").filter(Boolean).map((l) => l.split("\t").reverse() as [string, string]));
}

/** `refs/handoff/leases/x` pushed to the remote with plain git, as anyone with push access can. */
function plant(bare: string): void {
  const attacker = cloneOf(bare);
  const c = commit(attacker, { tree: tree(attacker, { x: "x" }), message: "x" });
  gitOut(attacker, "push", "-q", bare, `${c}:${PLANTED}`);
}

/**
 * A clone that made a task with a scope and claimed it while the remote was out of reach (a
 * tentative grant: the task ref and the lease set wait for sync), then the planted ref.
 */
async function claimedOffline(bare: string, url: string) {
  const clone = cloneOf(url);
  // In-process (support/seed.ts): what the syncs below do with it is the subject.
  await storeTasks({ cwd: clone, agent: "lead" }, [{ id: "q", objective: "a task with a scope", scope: ["src/**"] }]);
  renameSync(bare, `${bare}.away`);
  await storeClaimOffline({ cwd: clone, agent: "lead" }, "q");
  renameSync(`${bare}.away`, bare);
  plant(bare);
  return clone;
}

async function plantedSync(bare: string, url: string) {
  const clone = await claimedOffline(bare, url);
  const local = (ref: string) => gitOut(clone, "rev-parse", ref);

  const s = cli(["sync", "--json"], { cwd: clone, agent: "lead" });
  assert.is(s.code, EXIT_CODES.quarantined, s.stdout + s.stderr);
  assert.ok(s.json.pushed.includes("refs/handoff/tasks/q"), JSON.stringify(s.json));
  assert.not.ok(s.json.pushed.includes(LEASES));
  assert.equal(s.json.not_pushed, [{ ref: LEASES, blocker: PLANTED, repair: { hazard: null, deletes: true, command: "git handoff sync --repair", hint: "git handoff sync --repair deletes it" } }]);
  // The refused ref carries the same advice the text gives.
  const planted = s.json.quarantined.find((q: { ref: string }) => q.ref === PLANTED);
  assert.equal(planted.repair, { hazard: null, deletes: true, command: "git handoff sync --repair", hint: "git handoff sync --repair deletes it" });
  // The claim's task is on the remote; the lease set is not, and stays tentative here.
  const there = lsRemote(clone);
  assert.is(there.get("refs/handoff/tasks/q"), local("refs/handoff/tasks/q"));
  assert.not.ok(there.has(LEASES));
  assert.is(JSON.parse(gitOut(bare, "show", "refs/handoff/tasks/q:task.json")).claim.agent, "lead");
  assert.equal(s.json.confirmed.map((t: { ref: string }) => t.ref), ["refs/handoff/tasks/q"]);
  assert.ok(gitOut(clone, "for-each-ref", "--format=%(refname)", "refs/handoff-local/tentative/").split("\n").includes("refs/handoff-local/tentative/leases"), "the lease set is still tentative");

  const text = cli(["sync"], { cwd: clone, agent: "lead" });
  assert.is(text.code, EXIT_CODES.quarantined, text.stderr);
  assert.match(text.stdout, /^not pushed: refs\/handoff\/leases \(origin holds refs\/handoff\/leases\/x, a name no git-handoff writes, and git cannot create refs\/handoff\/leases beside it; git handoff sync --repair deletes it, then sync again\)$/m);
  assert.match(text.stdout, /^refused on receive: refs\/handoff\/leases\/x: .*; git handoff sync --repair deletes it\)$/m);
  const status = cli(["status", "--json"], { cwd: clone, agent: "lead" });
  assert.equal(status.json.quarantined.find((q: { ref: string }) => q.ref === PLANTED)?.repair?.command, "git handoff sync --repair", "status --json says it too");

  // A write that needs no lease set goes through; a claim, which needs it, is refused at once.
  const added = cli(["task", "add", "another", "--id", "r", "--push", "--json"], { cwd: clone, agent: "lead" });
  assert.is(added.code, 0, added.stdout + added.stderr);
  assert.is(lsRemote(clone).get("refs/handoff/tasks/r"), local("refs/handoff/tasks/r"));
  ok(cli(["task", "add", "scoped", "--id", "s", "--scope", "lib/**", "--push"], { cwd: clone, agent: "lead" }));
  const claim = cli(["claim", "s", "--json"], { cwd: clone, agent: "bob" });
  assert.is(claim.code, EXIT_CODES.quarantined, claim.stdout + claim.stderr);
  assert.is(claim.json.error.code, "quarantined");
  assert.match(claim.json.error.message, /holds refs\/handoff\/leases\/x, .*git cannot create refs\/handoff\/leases beside it; remove it with: git handoff sync --repair$/);

  // The repair deletes the planted ref, and the sync it runs pushes the lease set.
  const r = cli(["sync", "--repair", "--json"], { cwd: clone, agent: "lead" });
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.json.not_pushed, []);
  assert.ok(r.json.pushed.includes(LEASES), JSON.stringify(r.json));
  const after = lsRemote(clone);
  assert.not.ok(after.has(PLANTED));
  assert.is(after.get(LEASES), local(LEASES));
  assert.is(gitOut(clone, "for-each-ref", "refs/handoff-local/tentative/"), "", "every offline grant settled");
  ok(cli(["claim", "s"], { cwd: clone, agent: "bob" }));
  assert.is(lsRemote(clone).get(LEASES), local(LEASES));
}

test("a remote by path: sync pushes all but the lease set, says what holds it back and how to fix it, exits quarantined; after --repair everything goes out", async () => {
  const bare = emptyRemote();
  await plantedSync(bare, bare);
});

test("smart HTTP: the same", async () => {
  const served = serveRoot();
  const http = await startHttp(served.root);
  servers.push(http);
  const bare = served.bare("planted");
  gitOut(cloneOf(emptyRemote()), "push", "-q", bare, "main");
  await plantedSync(bare, http.url("planted"));
});

test("MCP's sync pushes the rest too, and its refusal names the ref held back, what blocks it and a person's repair", async () => {
  const bare = emptyRemote();
  const clone = await claimedOffline(bare, bare);
  const mcp = await inProcess(clone, { agent: "lead" });
  try {
    const e = await mcp.refused("sync");
    assert.is(e.code, "quarantined");
    assert.match(e.message, /not pushed, a ref refused on receive stands where git would create it: refs\/handoff\/leases \(beside refs\/handoff\/leases\/x\)/);
    assert.ok(e.data.pushed.includes("refs/handoff/tasks/q"), JSON.stringify(e.data));
    assert.equal(e.data.not_pushed.map((b: { ref: string; blocker: string; repair: { command: string } }) => [b.ref, b.blocker, b.repair.command]), [[LEASES, PLANTED, "git handoff sync --repair"]]);
    assert.ok(e.suggestions.some((x: { detail: string }) => /a person's git handoff sync --repair in a shell.*the refs not pushed go out with the sync it runs/.test(x.detail)), JSON.stringify(e.suggestions));
  } finally {
    await mcp.close();
  }
  assert.ok(lsRemote(clone).has("refs/handoff/tasks/q"));
});

test.run();
