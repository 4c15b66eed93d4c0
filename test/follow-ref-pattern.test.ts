// Following one ref fetches it as the pattern `<ref>*` (a missing exact name would fail the whole
// fetch): other refs the pattern matches come along, and they are judged and applied like the ref
// itself, never left in the tracking refs unseen (a later sync would take them as already judged).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { pullRefs } from "../src/sync/follow-ref.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { cleanEnv, cleanupTemp, cli, gitOut } from "./support/repo.ts";
import { twoClones } from "./support/servers.ts";

test.after(cleanupTemp);

test("a pull of tasks/f1 also applies tasks/f12, which its pattern brought, and refuses a hostile tasks/f13", async () => {
  const { a, b, bare } = twoClones();
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
    // Nothing was left for a later sync to take as already judged: sync agrees and changes nothing.
    assert.is(cli(["sync"], { cwd: b, agent: "bob" }).code, 0);
    assert.is(await store.readRef("refs/handoff/tasks/f13"), null);
  } finally {
    store.close();
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

test.run();
