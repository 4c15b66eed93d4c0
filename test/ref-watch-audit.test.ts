// The periodic look for watch events that never came (ref-watch.ts): it runs between listings, in
// the background, never inside one, and what it finds different is read again by the next listing.
import { mkdirSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { WatchedRefFolder } from "../src/git/ref-watch.ts";
import { cleanupTemp, tempDir } from "./support/repo.ts";

test.after(cleanupTemp);

const A = "a".repeat(40);
const B = "b".repeat(40);
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

test("a change no event told of shows once the audit has run, which no listing waits for", async () => {
  const dir = tempDir();
  mkdirSync(`${dir}/refs/handoff/tasks`, { recursive: true });
  // The refs' values live here, not in the files: changing them makes no file event, as a
  // dropped event would leave a running process.
  const values = new Map<string, string>();
  for (let i = 0; i < 600; i++) {
    values.set(`refs/handoff/tasks/t-${i}`, A);
    writeFileSync(`${dir}/refs/handoff/tasks/t-${i}`, "");
  }
  let now = 1_000_000;
  let reads = 0;
  const read = (name: string) => (reads++, values.get(name));
  const walk = (d: string) => ({ refs: new Map([...values].filter(([n]) => n.startsWith(`${d}/`))), nested: false });
  const folder = new WatchedRefFolder(dir, "refs/handoff/tasks", read, walk, () => now);
  try {
    assert.is(folder.list().size, 600);
    await turns(3);
    values.set("refs/handoff/tasks/t-7", B);
    values.delete("refs/handoff/tasks/t-9");
    now += 5_000;
    assert.is(folder.list().get("refs/handoff/tasks/t-7"), A, "no event, no audit yet");

    now += 6_000;
    const before = reads;
    const v = folder.version;
    const due = folder.list();
    assert.is(reads, before, "the listing that finds the audit due reads nothing itself");
    assert.is(due.get("refs/handoff/tasks/t-7"), A);
    await turns(2);
    assert.ok(reads > before && reads < before + 600, `read a chunk at a time (${reads - before} so far)`);
    await turns(10);
    const after = folder.list();
    assert.is(after.get("refs/handoff/tasks/t-7"), B, "the change the watch missed");
    assert.is(after.has("refs/handoff/tasks/t-9"), false, "and the ref that went");
    assert.is(after.size, 599);
    assert.is(folder.version, v + 1, "one step, which callers patch from");
    assert.equal(folder.changedSince(v)!.sort(), ["refs/handoff/tasks/t-7", "refs/handoff/tasks/t-9"]);

    const settled = reads;
    now += 5_000;
    folder.list();
    await turns(10);
    assert.is(reads, settled, "no audit again before the next ten seconds");
  } finally {
    folder.close();
  }
});

test.run();
