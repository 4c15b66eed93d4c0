// An agent's record (refs/handoff/agents/<agent>) is its latest declaration: a heartbeat replaces
// the heartbeat before it (same parent), so two versions of one agent's record often diverge, and
// a sync must then keep the newer one. Laying an older local version on the remote's newer one
// made a live agent look silent everywhere (and its leases open to the sweep of silent agents).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cleanupTemp, cli, gitOut } from "./support/repo.ts";
import { storeHeartbeat, storeSession } from "./support/seed.ts";
import { cloneOf, emptyRemote } from "./support/servers.ts";

test.after(cleanupTemp);

const ALICE = "refs/handoff/agents/alice";

function project() {
  const bare = emptyRemote();
  return { bare, a: cloneOf(bare), b: cloneOf(bare) };
}

const ok = (r: ReturnType<typeof cli>) => {
  assert.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return r;
};

const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
const at = (now: string) => ({ HANDOFF_NOW: now });
const heartbeatOf = (repo: string, ref = ALICE) => JSON.parse(gitOut(repo, "show", `${ref}:agent.json`)).heartbeat_at as string;

/** A sync that accepts everything it receives. */
function cleanSync(cwd: string, agent = "bob") {
  const r = ok(cli(["sync", "--json"], { cwd, agent }));
  assert.equal(r.json.quarantined ?? [], [], `refused on receive: ${r.stderr}`);
  return r;
}

/** alice's session and a heartbeat on it (in-process, support/seed.ts), synced: the heartbeat `oldBeat` is on the remote and here. */
async function aliceBeating(a: string, oldBeat: string): Promise<string> {
  await storeSession({ cwd: a, agent: "alice", now: ago(120) }, "parser");
  await storeHeartbeat({ cwd: a, agent: "alice", now: oldBeat });
  cleanSync(a);
  return gitOut(a, "rev-parse", ALICE);
}

test("a sync that meets an older local version of an agent's record keeps the remote's newer heartbeat (a --push heartbeat landed, not yet settled here)", async () => {
  const { bare, a, b } = project();
  const old = ago(90);
  const before = await aliceBeating(a, old);
  // alice's --push heartbeat replaces the old one (same parent) and lands on the remote; a sync of
  // another agent of this clone runs before it moves the local ref: that is the state made here.
  const fresh = ago(1);
  ok(cli(["heartbeat", "--push"], { cwd: a, agent: "alice", env: at(fresh) }));
  const pushed = gitOut(bare, "rev-parse", ALICE);
  assert.is.not(pushed, before);
  assert.is(gitOut(bare, "rev-parse", `${pushed}^`), gitOut(bare, "rev-parse", `${before}^`), "the heartbeat replaced the one before it: the two versions diverge");
  gitOut(a, "update-ref", ALICE, before, pushed);

  const s = cleanSync(a);
  assert.equal(s.json.conflicts, []);
  assert.is(heartbeatOf(bare), fresh, "the remote keeps the newer heartbeat");
  assert.is(heartbeatOf(a), fresh, "and so does this clone");
  assert.is(gitOut(a, "rev-parse", ALICE), pushed, "nothing older was laid on top: this clone takes the remote's version");
  cleanSync(b);
  const alice = ok(cli(["agents", "--json"], { cwd: b, agent: "bob" })).json.agents.find((x: { agent: string }) => x.agent === "alice");
  assert.is(alice.heartbeat_at, fresh);
  assert.is(alice.status, "active", "a live agent does not look silent to other clones");
});

test("an older local version the remote lacks is left out, and the report says the remote's was taken, not that anything was replayed", async () => {
  const { bare, a } = project();
  await aliceBeating(a, ago(90));
  await storeHeartbeat({ cwd: a, agent: "alice", now: ago(60) });
  const unpushed = gitOut(a, "rev-parse", ALICE);
  const fresh = ago(1);
  ok(cli(["heartbeat", "--push"], { cwd: a, agent: "alice", env: at(fresh) }));
  const pushed = gitOut(bare, "rev-parse", ALICE);
  // The older local heartbeat is this clone's again (a --push write whose local update lost to a sync).
  gitOut(a, "update-ref", ALICE, unpushed, pushed);

  const s = cleanSync(a);
  assert.equal(s.json.conflicts, []);
  assert.equal(s.json.replayed, [], "nothing was laid on the remote's line");
  assert.not.ok(s.json.pushed.includes(ALICE), "nothing of alice's pushed back");
  assert.is(gitOut(a, "rev-parse", ALICE), pushed);
  assert.is(heartbeatOf(a), fresh);
  const text = ok(cli(["sync"], { cwd: a, agent: "bob" }));
  assert.not.match(text.stdout + text.stderr, /replayed [1-9]/);
});

test("another clone that saw an agent's heartbeat takes the one that replaced it, and pushes nothing of that agent back", async () => {
  const { bare, a, b } = project();
  await aliceBeating(a, ago(90));
  cleanSync(b);
  const fresh = ago(1);
  ok(cli(["heartbeat", "--push"], { cwd: a, agent: "alice", env: at(fresh) }));
  const pushed = gitOut(bare, "rev-parse", ALICE);

  const s = cleanSync(b, "carol");
  assert.equal(s.json.pushed, [], "carol's clone writes nothing on alice's ref");
  assert.is(gitOut(bare, "rev-parse", ALICE), pushed);
  assert.is(gitOut(b, "rev-parse", ALICE), pushed);
  assert.is(heartbeatOf(b), fresh);
});

test("a clone holding only what the remote had takes the writer's replacement even when its clock was set back", async () => {
  const { bare, a, b } = project();
  await aliceBeating(a, ago(10));
  cleanSync(b);
  // alice's clock went back (an NTP step): her next heartbeat reads earlier than the last one.
  const stepped = ago(20);
  ok(cli(["heartbeat", "--push"], { cwd: a, agent: "alice", env: at(stepped) }));
  const pushed = gitOut(bare, "rev-parse", ALICE);

  const s = cleanSync(b, "carol");
  assert.equal(s.json.pushed, [], "only alice's clones write alice's ref");
  assert.is(gitOut(bare, "rev-parse", ALICE), pushed);
  assert.is(heartbeatOf(b), stepped);
});

test("a newer local version of an agent's record still goes on top of an older remote one, and every clone takes it", async () => {
  const { bare, a, b } = project();
  const before = await aliceBeating(a, ago(90));
  ok(cli(["heartbeat", "--push"], { cwd: a, agent: "alice", env: at(ago(30)) }));
  const pushed = gitOut(bare, "rev-parse", ALICE);
  // Here, a later heartbeat written on the version the push replaced: the two diverge again.
  gitOut(a, "update-ref", ALICE, before, pushed);
  const fresh = ago(1);
  await storeHeartbeat({ cwd: a, agent: "alice", now: fresh });
  assert.is(gitOut(a, "rev-parse", `${ALICE}^`), gitOut(a, "rev-parse", `${pushed}^`));

  const s = cleanSync(a);
  assert.equal(s.json.replayed, [ALICE]);
  assert.equal(s.json.pushed, [ALICE]);
  assert.is(heartbeatOf(bare), fresh);
  assert.is(gitOut(bare, "rev-parse", `${ALICE}^`), pushed, "laid on the remote's version, which stays in the history");
  cleanSync(b);
  assert.is(heartbeatOf(b), fresh);
});

test.run();
