// One-shot claims in a clone whose task refs are packed find the claimed tasks through
// .git/handoff/claimed.packed (claimed-index.ts): the claimed tasks among refs held in
// packed-refs alone, kept by packed-refs' identity, with the loose refs written since laid over
// them. It must never change an answer: claims made after the pack, a repack that moves claimed
// tasks into packed-refs, a summary of another packed-refs, and a forged or torn one all give what
// a full listing gives.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut, tempRepo } from "./support/repo.ts";
import { storeTasks } from "./support/seed.ts";
import { listClaimedTasks } from "../src/store/task-listing.ts";
import { openStore } from "../src/store/store.ts";

test.after(cleanupTemp);

const summaryOf = (repo: string) => `${repo}/.git/handoff/claimed.packed`;
const tip = (repo: string, id: string) => gitOut(repo, "rev-parse", `refs/handoff/tasks/${id}`);

async function packedProject(ids: string[]): Promise<string> {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, ids.map((id) => ({ id, objective: `task ${id}` })));
  gitOut(repo, "pack-refs", "--all");
  return repo;
}

/** A claim by `agent` (capacity 1): null when granted, else the task its refusal names as held. */
function claimHeld(repo: string, agent: string, id: string): string | null {
  const r = cli(["claim", id, "--json"], { cwd: repo, agent });
  if (r.code === 0) return null;
  assert.is(r.code, 3, r.stdout + r.stderr);
  assert.is(r.json.error.code, "at_capacity", r.stdout);
  return /\(([a-z0-9-]+)\)/.exec(r.json.error.message)?.[1] ?? "?";
}

test("claims after a pack, and a repack that moves claimed tasks into packed-refs, answer as a full listing", async () => {
  const repo = await packedProject(["a", "b", "c", "d", "e"]);
  assert.is(claimHeld(repo, "alice", "a"), null);
  assert.ok(existsSync(summaryOf(repo)), "the first claim's capacity check kept the packed part's summary");
  // a's claim is a loose ref laid over its packed value: counted.
  assert.is(claimHeld(repo, "alice", "b"), "a");
  assert.is(claimHeld(repo, "bob", "c"), null);
  // Both claims move into packed-refs: another identity, so a full pass, then the summary holds them.
  gitOut(repo, "pack-refs", "--all");
  assert.is(claimHeld(repo, "bob", "d"), "c");
  const kept = readFileSync(summaryOf(repo), "utf8").split("\n").filter(Boolean);
  assert.equal(kept.slice(1).map((l) => l.split("\t")[0]).sort(), [`refs/handoff/tasks/a ${tip(repo, "a")}`, `refs/handoff/tasks/c ${tip(repo, "c")}`]);
  assert.is(claimHeld(repo, "bob", "d"), "c", "from the summary");
  assert.is(claimHeld(repo, "alice", "e"), "a", "from the summary");
  // A release by a command that reads neither file: a loose ref over a's packed claim frees it.
  assert.is(cli(["release", "a"], { cwd: repo, agent: "alice" }).code, 0);
  assert.is(claimHeld(repo, "alice", "e"), null);
  assert.is(claimHeld(repo, "alice", "b"), "e");
});

test("a summary of another packed-refs, a forged line and a torn file are thrown away", async () => {
  const repo = await packedProject(["a", "b", "c"]);
  assert.is(claimHeld(repo, "alice", "a"), null);
  gitOut(repo, "pack-refs", "--all");
  assert.is(claimHeld(repo, "alice", "b"), "a");
  const good = readFileSync(summaryOf(repo), "utf8");
  const [head, line] = good.split("\n") as [string, string];
  assert.match(line, /^refs\/handoff\/tasks\/a [0-9a-f]{40}\t\[/);

  // Another packed-refs' summary (a repack since): alice's claim of a is still found.
  writeFileSync(summaryOf(repo), `${head.replace(/ \S+ (\d+)$/, " 1:2:3 $1")}\n`);
  assert.is(claimHeld(repo, "alice", "b"), "a");
  // This packed-refs' identity, but a's line names a commit packed-refs does not hold for it, and
  // a line saying b is alice's: not believed.
  const forged = line.replace("refs/handoff/tasks/a ", "refs/handoff/tasks/b ").replace(/ [0-9a-f]{40}\t/, ` ${"1".repeat(40)}\t`);
  assert.match(forged, /^refs\/handoff\/tasks\/b /);
  writeFileSync(summaryOf(repo), `${head}\n${forged}\n`);
  assert.is(claimHeld(repo, "alice", "c"), "a");
  // Torn: half a record.
  writeFileSync(summaryOf(repo), `${head}\n${line.slice(0, line.length / 2)}\n`);
  assert.is(claimHeld(repo, "alice", "c"), "a");
  // An empty summary under this identity is what a full pass would write for no claimed task:
  // trusted, so it is only ever written by a full pass. After a's release it is the truth.
  assert.is(cli(["release", "a"], { cwd: repo, agent: "alice" }).code, 0);
  gitOut(repo, "pack-refs", "--all");
  assert.is(claimHeld(repo, "alice", "b"), null);
  assert.is(claimHeld(repo, "alice", "c"), "b");
});

test("many loose refs over packed ones, one's last line in the index torn: answers as a full listing", async () => {
  const ids = Array.from({ length: 22 }, (_, i) => `t${i}`);
  const repo = await packedProject(ids);
  for (let i = 0; i < 20; i++) assert.is(claimHeld(repo, `agent-${i}`, `t${i}`), null, `t${i}`);
  assert.is(claimHeld(repo, "agent-3", "t20"), "t3");
  assert.is(claimHeld(repo, "agent-17", "t21"), "t17");
  // A line cut short after t3's last sound one: passed over, the sound one still answers.
  const index = `${repo}/.git/handoff/claimed.index`;
  writeFileSync(index, readFileSync(index, "utf8") + `refs/handoff/tasks/t3 ${tip(repo, "t3")} clai\n`);
  assert.is(claimHeld(repo, "agent-3", "t20"), "t3");
  assert.is(claimHeld(repo, "agent-0", "t21"), "t0");
  assert.is(cli(["release", "t0"], { cwd: repo, agent: "agent-0" }).code, 0);
  assert.is(claimHeld(repo, "agent-0", "t21"), null);
});

test("the summary keeps a claim's holder, expiry, age and scope, not its record: capacity, overlaps and listings answer as a full pass", async () => {
  const repo = tempRepo();
  const scope = (id: string) => (id === "e" ? ["src/x.ts"] : [`src/${id}.ts`, "src/x.ts"]);
  await storeTasks({ cwd: repo, agent: "lead" }, ["a", "b", "c", "d", "e"].map((id) => ({ id, objective: `task ${id}`, scope: scope(id) })));
  gitOut(repo, "pack-refs", "--all");
  for (const [who, id] of [["alice", "a"], ["bob", "b"], ["carol", "c"]] as const) assert.is(cli(["claim", id, "--ttl", id === "c" ? "1s" : "1h"], { cwd: repo, agent: who }).code, 0, id);
  gitOut(repo, "pack-refs", "--all");
  await new Promise((r) => setTimeout(r, 1100)); // carol's claim of c has expired
  assert.is(cli(["task", "list"], { cwd: repo, agent: "lead" }).code, 0);
  const outputs = () => {
    const refused = cli(["claim", "d", "--json"], { cwd: repo, agent: "alice" }).stdout; // alice holds a
    const granted = cli(["claim", "e", "--json"], { cwd: repo, agent: "dave" }); // near a's and b's scopes
    assert.is(cli(["release", "e"], { cwd: repo, agent: "dave" }).code, 0);
    return [refused, JSON.stringify(granted.json.overlaps)];
  };
  outputs(); // the first pass after the pack writes the summary
  const summary = readFileSync(summaryOf(repo), "utf8");
  assert.match(summary, /^handoff-claimed-packed 2 /);
  const lines = summary.split("\n").filter(Boolean).slice(1);
  assert.is(lines.length, 3, summary);
  for (const l of lines) {
    const [, fields] = l.split("\t") as [string, string];
    assert.not.match(fields, /objective|task [abc]/, "no record kept");
    const [id, holder, expires, created, kept] = JSON.parse(fields) as [string, string, string, string, string[]];
    assert.is(l.slice(0, l.indexOf(" ")), `refs/handoff/tasks/${id}`);
    const record = JSON.parse(gitOut(repo, "show", `refs/handoff/tasks/${id}:task.json`)); // as stored
    assert.equal([holder, expires, created, kept], [record.claim.agent, record.claim.expires_at, record.created_at, scope(id)]);
  }
  const fromSummary = outputs();
  assert.match(fromSummary[0]!, /at_capacity/);
  const near = (JSON.parse(fromSummary[1]!) as { task: string; agent: string }[]).map((o) => `${o.task} ${o.agent}`).sort();
  assert.equal(near, ["a alice", "b bob"], "c's claim has expired");
  // The same with no summary: a full pass reads every record.
  rmSync(summaryOf(repo));
  assert.equal(outputs(), fromSummary);
  // A one-shot listing of the claimed tasks gets their whole records all the same (settled: c is free again).
  outputs();
  const store = await openStore({ cwd: repo, agent: "lead" });
  try {
    assert.ok(!store.warm);
    const listed = await listClaimedTasks(store);
    assert.equal(listed.map((t) => [t.id, t.objective, t.status]), [["a", "task a", "claimed"], ["b", "task b", "claimed"], ["c", "task c", "todo"]]);
  } finally {
    store.close();
  }
});

test.run();
