// The view file's columns (src/store/view-columns.ts) as writeColumns orders them are read without
// parsing their ids and numbers as JSON (cutColumns); anything else (an id with an escape in it, the
// order a build before wrote) is parsed whole. Either way the columns read are the ones written.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { asciiJson } from "../src/store/record-cache-listing.ts";
import { columnsFrom, cutColumns, readColumns, writeColumns, type ReadColumns, type ViewColumns } from "../src/store/view-columns.ts";
import type { ViewTask } from "../src/core/view-task.ts";

const claim = (agent: string, branch: string | null, at: string) => ({ agent, branch, claimed_at: at, expires_at: "2026-11-02T03:00:00.000Z", ttl_ms: 3_600_000 });
const task = (id: string, i: number): ViewTask =>
  ({
    id,
    objective: `task ${i}`,
    status: i % 3 ? "claimed" : "todo",
    scope: [`src/${i}.ts`],
    attempts: 0,
    updated_at: "2026-11-01T00:00:00.000Z",
    base: `b${i % 2}`,
    ...(i % 3 ? { claim: claim(`agent-${i % 4}`, i % 2 ? `br-${i % 5}` : null, `2026-11-01T0${i % 10}:00:00.000Z`) } : {}),
  }) as unknown as ViewTask;

/** The columns' JSON as the view file holds it (ASCII), and what each reader makes of it. */
function read(ids: string[], order?: (c: ViewColumns) => object) {
  const tasks = ids.map(task);
  const records = tasks.map((t) => asciiJson(JSON.stringify(t)));
  const written = writeColumns(tasks, records);
  const bytes = Buffer.from(`xx${asciiJson(JSON.stringify(order ? order(written) : written))}yy`, "latin1");
  const parsed = readColumns(JSON.parse(bytes.toString("latin1", 2, bytes.length - 2)) as ViewColumns);
  return { parsed, cut: cutColumns(bytes.toString("latin1", 2, bytes.length - 2)), read: columnsFrom(bytes, 2, bytes.length - 2) };
}

/** Typed arrays as their bytes (NaN, the cell of no claim, is not equal to itself). */
const plain = (r: ReadColumns | null) => r && Object.fromEntries(Object.entries(r).map(([k, v]) => [k, ArrayBuffer.isView(v) ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("hex") : v]));

test("columns as written are cut, not parsed, and are the columns the JSON holds", () => {
  for (const n of [0, 1, 2, 7, 40]) {
    const { parsed, cut, read: got } = read(Array.from({ length: n }, (_, i) => `t-${String(i).padStart(5, "0")}`));
    assert.ok(parsed, `${n}: parsed`);
    assert.ok(cut, `${n} tasks: cut from where writeColumns puts them`);
    assert.equal(plain(cut), plain(parsed), `${n} tasks`);
    assert.equal(plain(got), plain(parsed));
  }
});

test("an id with an escape in its JSON, or one that looks like the columns' own text, is parsed whole", () => {
  for (const odd of ['q"uote', "back\\slash", "na\u00efve \u6771\u4eac \u{1f600}", '],"holder":"', 'a","b', "]"]) {
    const ids = ["t-1", odd, "t-3"];
    const { parsed, cut, read: got } = read(ids);
    assert.equal(parsed!.c.ids, ids);
    if (cut) assert.equal(cut.c.ids, ids, `cut: ${odd}`);
    assert.equal(plain(got), plain(parsed), odd);
  }
});

test("columns in the order a build before wrote them (ids first) are parsed whole, the same", () => {
  const ids = ["t-1", "t-2", "t-3", "t-4"];
  const { parsed, cut, read: got } = read(ids, ({ ids, ...rest }) => ({ ids, ...rest }));
  assert.is(cut, null);
  assert.equal(plain(got), plain(parsed));
  assert.equal(got!.c.ids, ids);
});

test.run();
