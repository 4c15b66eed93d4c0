// Following one ref fetches it as the pattern `<ref>*` (a missing exact name would fail the whole
// fetch): other refs the pattern matches come along, and they are judged and applied like the ref
// itself, never left in the tracking refs unseen (a later sync would take them as already judged).
// That is `git fetch`'s way; a remote fetched in process (by path here, stream-remote.ts) is listed
// first and fetched by exact name, so the first test sends the remote to git (HANDOFF_PATH_REMOTE=git).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { pullRefs } from "../src/sync/follow-ref.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { readTraffic } from "../src/sync/remote-traffic.ts";
import { cleanEnv, cleanupTemp, cli, gitOut, seedTasks } from "./support/repo.ts";
import { twoClones } from "./support/servers.ts";

test.after(cleanupTemp);

test("a pull of tasks/f1 also applies tasks/f12, which its pattern brought, and refuses a hostile tasks/f13", async () => {
  const { a, b, bare } = twoClones();
  const viaGit = { HANDOFF_PATH_REMOTE: "git" };
  process.env.HANDOFF_PATH_REMOTE = "git";
  for (const id of ["f1", "f12"]) assert.is(cli(["task", "add", `job ${id}`, "--id", id, "--push"], { cwd: a, agent: "alice" }).code, 0);
  // A hostile ref the pattern also matches: a commit whose tree is no task record.
  const tree = gitOut(bare, "hash-object", "-t", "tree", "-w", "/dev/null");
  const bad = gitOut(bare, "commit-tree", tree, "-m", "not a task");
  gitOut(bare, "update-ref", "refs/handoff/tasks/f13", bad);
  const store = await openSyncedStore({ cwd: b, agent: "bob", env: cleanEnv() });
  try {
    const p = await pullRefs(store, "origin", ["refs/handoff/tasks/f1", "refs/handoff/results/f1"]);
    assert.ok(p.ok);
    assert.is(p.ok && p.changed, true);
    assert.is(await store.readRef("refs/handoff/tasks/f1"), gitOut(bare, "rev-parse", "refs/handoff/tasks/f1"));
    assert.is(await store.readRef("refs/handoff/tasks/f12"), gitOut(bare, "rev-parse", "refs/handoff/tasks/f12"), "the other match is applied, not only tracked");
    assert.is(await store.readRef("refs/handoff/tasks/f13"), null, "the hostile match never enters refs/handoff/");
    assert.ok(p.ok && p.refused?.some((q) => q.ref === "refs/handoff/tasks/f13"), "and is named as refused");
    // Nothing was left for a later sync to take as already judged: sync agrees (f13 kept back: exit 3) and changes nothing.
    const s = cli(["sync", "--json"], { cwd: b, agent: "bob", env: viaGit });
    assert.is(s.code, 3, s.stderr);
    assert.equal(s.json.quarantined.map((q: { ref: string }) => q.ref), ["refs/handoff/tasks/f13"]);
    assert.is(await store.readRef("refs/handoff/tasks/f13"), null);
  } finally {
    store.close();
    delete process.env.HANDOFF_PATH_REMOTE;
  }
});

test("a pull of a ref the remote lacks is no error and changes nothing", async () => {
  const { b } = twoClones();
  const store = await openSyncedStore({ cwd: b, agent: "bob", env: cleanEnv() });
  try {
    const before = gitOut(b, "for-each-ref", "--format=%(refname)", "refs/");
    assert.equal(await pullRefs(store, "origin", ["refs/handoff/results/nobody"]), { ok: true, changed: false });
    assert.is(gitOut(b, "for-each-ref", "--format=%(refname)", "refs/"), before);
  } finally {
    store.close();
  }
});

test("in a clone of more than 200 tasks a pull lists first, and fetches only once the ref moved", async () => {
  const { a, b } = twoClones();
  await seedTasks(a, Array.from({ length: 201 }, (_, i) => ({ id: `many-${i}` })), "alice");
  assert.is(cli(["sync"], { cwd: a, agent: "alice" }).code, 0);
  assert.is(cli(["sync"], { cwd: b, agent: "bob" }).code, 0);
  const store = await openSyncedStore({ cwd: b, agent: "bob", env: cleanEnv() });
  try {
    const refs = ["refs/handoff/tasks/many-7", "refs/handoff/results/many-7"];
    let from = Date.now() - 1;
    assert.equal(await pullRefs(store, "origin", refs), { ok: true, changed: false });
    assert.equal(readTraffic(store, "origin", from).map((c) => c.kind), ["ls-remote"], "nothing moved: one listing, no fetch");
    assert.is(cli(["claim", "many-7"], { cwd: a, agent: "alice" }).code, 0);
    from = Date.now() - 1;
    const p = await pullRefs(store, "origin", refs);
    assert.is(p.ok && p.changed, true);
    assert.equal(readTraffic(store, "origin", from).map((c) => c.kind), ["ls-remote", "fetch"]);
    assert.is(await store.readRef("refs/handoff/tasks/many-7"), gitOut(a, "rev-parse", "refs/handoff/tasks/many-7"));
  } finally {
    store.close();
  }
});

test.run();
