// The record of the loose refs kept with their folders' stats (src/store/ref-folder-record.ts),
// checked against every move after it: its tests (ref-folder-record, task-ref-record) run one
// command before and after each move and compare its answer with one read afresh.
import { existsSync, readFileSync, rmSync } from "node:fs";
import * as assert from "uvu/assert";

/** Past the file system's tick of the last ref written (a few ms here; a record waits for it). */
export const settle = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 30);

/** `read()` with the record at `record` removed first (it is written again). */
export function readAfresh(record: string, read: () => string): string {
  rmSync(record, { force: true });
  return read();
}

/**
 * For each move: the record written before it, `read()` after it equal to a read afresh, and
 * different from before where `shows(what)`, and the record written again once settled. The read
 * that writes the record again is the next move's read before it (nothing moves between them).
 */
export function eachMoveSeen(record: string, moves: [string, () => unknown][], read: () => string, shows: (what: string) => boolean): void {
  settle();
  let seen = read();
  for (const [what, move] of moves) {
    assert.ok(existsSync(record), `${what}: recorded before`);
    const was = readFileSync(record, "utf8");
    move();
    const after = read();
    assert.is(after, readAfresh(record, read), `${what}: as read afresh`);
    if (shows(what)) assert.is.not(after, seen, `${what}: the move shows`);
    settle();
    seen = read();
    assert.is.not(readFileSync(record, "utf8"), was, `${what}: recorded again`);
  }
}
