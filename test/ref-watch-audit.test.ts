// The periodic look for watch events that never came (ref-watch.ts): it runs between requests, in
// the background, never inside a listing, and what it finds different is read again by the next
// listing; a process that is never quiet still audits, a chunk a second.
import { mkdirSync, writeFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { WatchedRefFolder } from "../src/git/ref-watch.ts";
import { cleanupTemp, tempDir } from "./support/repo.ts";

test.after(cleanupTemp);

const A = "a".repeat(40);
const B = "b".repeat(40);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function settledOn<T>(f: () => T, ok: (v: T) => boolean, every = 30, within = 10_000): Promise<T> {
  const deadline = Date.now() + within;
  for (;;) {
    await sleep(every);
    const v = f();
    if (ok(v) || Date.now() > deadline) return v;
  }
}
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

/**
 * How long the audit waits here for a quiet process (20 ms in a running server): long enough that
 * the listings this test makes back to back hold it off even where a loaded machine (the whole
 * suite on two cores) pauses the process for tens of milliseconds.
 */
const QUIET_MS = 250;
/** A pause this long where the test lists back to back leaves the audit free to step: that attempt proves nothing. */
const STALL_MS = 200;

test("a change no event told of shows once the audit has run between requests, which no listing waits for", async () => {
  // An attempt that saw such a pause is run again with a fresh folder; three in a row fail the test
  // rather than pass it unproven.
  for (let attempt = 1; ; attempt++) {
    if (await auditScenario()) return;
    assert.ok(attempt < 3, `the process paused ${STALL_MS} ms or more between back-to-back listings in three attempts: the machine is too loaded to tell`);
  }
});

/** The scenario; false when the process paused where the test lists back to back (see STALL_MS). */
async function auditScenario(): Promise<boolean> {
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
  const folder = new WatchedRefFolder(dir, "refs/handoff/tasks", read, walk, () => now, QUIET_MS);
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
    // A process listing every few milliseconds (requests one after the other) holds it off, for
    // longer than it waits for quiet...
    let longest = 0;
    let last = performance.now();
    for (const until = last + 2 * QUIET_MS; last < until; ) {
      await sleep(5);
      folder.list();
      const t = performance.now();
      longest = Math.max(longest, t - last);
      last = t;
    }
    if (longest >= STALL_MS) return false;
    assert.is(reads, before, "no audit work while listings keep coming");
    // ...but only for so long (a second by its clock): then a chunk at each listing's next turn.
    const stepsFrom = performance.now();
    for (const step of ["the folder's names", "the first chunk"]) {
      now += 1_001;
      folder.list();
      folder.list(); // two listings in one turn: still one chunk
      await turns(2);
      // The second listing's wait for quiet runs out QUIET_MS later: a pause that long here lets it step too.
      if (performance.now() - stepsFrom >= STALL_MS) return false;
      assert.is(reads, before + (step === "the first chunk" ? 256 : 0), step);
    }
    // Once quiet, it finishes, and the next listing reads what it found different.
    const after = await settledOn(() => folder.list(), (l) => l.get("refs/handoff/tasks/t-7") === B, 2 * QUIET_MS);
    assert.is(after.get("refs/handoff/tasks/t-7"), B, "the change the watch missed");
    assert.is(after.has("refs/handoff/tasks/t-9"), false, "and the ref that went");
    assert.is(after.size, 599);
    assert.is(folder.version, v + 1, "one step, which callers patch from");
    assert.equal(folder.changedSince(v)!.sort(), ["refs/handoff/tasks/t-7", "refs/handoff/tasks/t-9"]);

    const settled = reads;
    now += 5_000;
    folder.list();
    await sleep(100);
    assert.is(reads, settled, "no audit again before the next ten seconds");
    return true;
  } finally {
    folder.close();
  }
}

test.run();
