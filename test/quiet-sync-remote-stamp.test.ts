// A remote on this disk answers a sync with nothing new without its refs being read: the last
// quiet sync kept the stamp of the remote's ref files its listing was read from (every loose ref's
// value under what was listed, packed-refs' identity, the folder), and while the stamp holds the
// listing is that one (src/git/path-remote.ts listPath, src/sync/quiet-sync.ts). Every way the
// remote's refs can move must make the stamp differ; a stamp that only went stale (the remote's
// refs packed, nothing else) is taken anew by the next sync.
import { cpSync, readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { listPath, type StampedListing } from "../src/git/path-remote.ts";
import { openSyncedStore } from "../src/sync/open.ts";
import { sync, type SyncReport } from "../src/sync/sync.ts";
import { cleanEnv, cleanupTemp, cli, gitOut, tempDir } from "./support/repo.ts";
import { twoClones } from "./support/servers.ts";

test.after(cleanupTemp);

const add = (cwd: string, id: string, ...more: string[]) => assert.is(cli(["task", "add", `task ${id}`, "--id", id, ...more], { cwd, agent: "lead" }).code, 0);

async function withStore<T>(cwd: string, fn: (s: Awaited<ReturnType<typeof openSyncedStore>>) => Promise<T> | T): Promise<T> {
  const store = await openSyncedStore({ cwd, agent: "lead", env: cleanEnv() });
  try {
    return await fn(store);
  } finally {
    store.close();
  }
}

const syncOnce = (cwd: string): Promise<SyncReport> => withStore(cwd, (s) => sync(s));

/** listPath as a sync's listing asks it (refs/handoff/ and a look at the other namespace). */
const listing = (cwd: string, known?: StampedListing) =>
  withStore(cwd, (s) => listPath(s.remoteSource, "origin", "refs/handoff/", undefined, ["refs/heads/handoff/leases", "refs/heads/handoff/tasks/"], known));

const remoteStampOf = (clone: string): string | undefined => JSON.parse(readFileSync(`${clone}/.git/handoff/sync-origin.quiet`, "utf8").split("\n")[0]!).remote_stamp;

test("a known listing is answered unread while the remote's ref files hold, and read again after each way they move", async () => {
  const { bare, a, b } = twoClones();
  add(a, "one");
  add(a, "two");
  await syncOnce(a);
  const first = await listing(a);
  assert.ok(first && typeof first !== "string" && first.text.includes("refs/handoff/tasks/one"), String(first));
  const real = first as StampedListing;
  // A sentinel text under the real stamp: returned as it is only if nothing was read.
  const sentinel = { text: "sentinel\n", stamp: real.stamp };
  assert.equal(await listing(a, sentinel), sentinel, "unchanged files: the known listing");

  const moved = async (why: string) => {
    const now = (await listing(a, sentinel)) as StampedListing;
    assert.ok(now && now.text !== "sentinel\n", `${why}: the refs are read again`);
    assert.is.not(now.stamp, sentinel.stamp, why);
    sentinel.stamp = now.stamp;
    assert.equal(await listing(a, sentinel), sentinel, `${why}: then the new stamp holds`);
    return now.text;
  };
  // Another folder with the very same files (every ref loose, no packed-refs: nothing but the
  // folder tells them apart): another remote.
  const copy = `${tempDir()}/copy.git`;
  cpSync(bare, copy, { recursive: true });
  gitOut(a, "remote", "set-url", "origin", copy);
  await moved("the remote's URL names another folder");
  gitOut(a, "remote", "set-url", "origin", bare);
  await moved("and back");
  // A loose ref written there (another clone's push).
  add(b, "theirs", "--push");
  assert.ok((await moved("a new loose ref")).includes("refs/handoff/tasks/theirs"));
  // Packed: the same values, a new packed-refs.
  gitOut(bare, "pack-refs", "--all");
  await moved("the refs packed");
  // A packed ref's value changed (a loose file over it).
  const one = gitOut(bare, "rev-parse", "refs/handoff/tasks/one");
  const two = gitOut(bare, "rev-parse", "refs/handoff/tasks/two");
  gitOut(bare, "update-ref", "refs/handoff/tasks/one", two);
  assert.ok((await moved("a packed ref overwritten loose")).includes(`${two}\trefs/handoff/tasks/one`));
  gitOut(bare, "update-ref", "refs/handoff/tasks/one", one);
  await moved("and back");
  // A ref deleted (packed and loose).
  gitOut(bare, "pack-refs", "--all");
  await moved("packed again");
  gitOut(bare, "update-ref", "-d", "refs/handoff/tasks/two");
  assert.not.ok((await moved("a packed ref deleted")).includes("refs/handoff/tasks/two"));
  // The other namespace's exact name looked at.
  gitOut(bare, "update-ref", "refs/heads/handoff/leases", one);
  assert.ok((await moved("the other namespace's lease ref")).includes("refs/heads/handoff/leases"));
});

test("sync: the quiet record keeps the remote's stamp, a stale one is taken anew, and a change there is still fetched", async () => {
  const { bare, a, b } = twoClones();
  add(a, "first");
  await syncOnce(a);
  await syncOnce(a); // finds nothing to do: leaves the record
  const kept = remoteStampOf(a);
  assert.ok(kept, "the record has the remote's stamp");
  assert.ok((await syncOnce(a)).unchanged);
  assert.is(remoteStampOf(a), kept, "a stamp that holds is not written again");

  // The remote's refs packed by its owner: the listing is the same, read once, and the stamp renewed.
  gitOut(bare, "pack-refs", "--all");
  const packed = await syncOnce(a);
  assert.ok(packed.unchanged, "the same listing: nothing new");
  const renewed = remoteStampOf(a);
  assert.ok(renewed && renewed !== kept, "the record takes the files' new stamp");
  assert.ok((await syncOnce(a)).unchanged);

  // Another clone's push: fetched, whatever the record says.
  add(b, "theirs", "--push");
  const fetched = await syncOnce(a);
  assert.not.ok(fetched.unchanged);
  assert.equal(fetched.fetched, ["refs/handoff/tasks/theirs"]);
  // A ref deleted on the remote (packed there) by hand: the whole way, which puts this clone's copy
  // of the live task back (only a task compacted there is removed here).
  await syncOnce(a);
  assert.ok((await syncOnce(a)).unchanged);
  gitOut(bare, "pack-refs", "--all");
  await syncOnce(a);
  gitOut(bare, "update-ref", "-d", "refs/handoff/tasks/theirs");
  const restored = await syncOnce(a);
  assert.not.ok(restored.unchanged);
  assert.equal(restored.pushed, ["refs/handoff/tasks/theirs"], JSON.stringify(restored));
  assert.is(gitOut(bare, "rev-parse", "refs/handoff/tasks/theirs"), gitOut(a, "rev-parse", "refs/handoff/tasks/theirs"));
});

test.run();
