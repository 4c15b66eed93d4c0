// readListing (src/git/upload-pack-v2.ts) reads an ls-refs answer from another machine as one
// latin1 string. It must answer exactly as reading it pkt-line by pkt-line does (pktLines, the
// framing every other answer goes through): the same listing text for a good answer, null for
// every answer out of shape. Random answers, good and damaged, read both ways.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DELIM_MARK, FLUSH_MARK, pktLines } from "../src/git/pkt-line.ts";
import { readListing } from "../src/git/upload-pack-v2.ts";
import { ansiLcg as rng } from "./support/rng.ts";

/** The reading by pkt-lines, as it was written before the one-string reading. */
function byPktLines(body: Buffer, prefixes: string[], from = 0): string | null {
  let text = "";
  for (const p of pktLines(body, from)) {
    if (p === null || p === DELIM_MARK) return null;
    if (p === FLUSH_MARK) return text;
    const m = /^([0-9a-f]{40}) (refs\/[^\x00-\x20\x7f]+)\n?$/.exec(p.toString("latin1"));
    if (!m || !prefixes.some((x) => m[2]!.startsWith(x))) return null;
    text += `${m[1]}\t${m[2]}\n`;
  }
  return null;
}

const hex = (r: () => number, n: number) => Array.from({ length: n }, () => "0123456789abcdef"[Math.floor(r() * 16)]).join("");
const frame = (payload: Buffer) => Buffer.concat([Buffer.from((payload.length + 4).toString(16).padStart(4, "0"), "latin1"), payload]);
const NAMES = ["refs/handoff/tasks/t-1", "refs/handoff/agents/a", "refs/heads/main", "refs/handoff/x\u00e9", "refs/handoff/a b", "refs/handoff/", "refs/", "refs/handoff/t\u0001", "refs/handoff/tasks/live-10"];

function answer(r: () => number): Buffer {
  const parts: Buffer[] = [];
  const lines = Math.floor(r() * 6);
  for (let i = 0; i < lines; i++) {
    const name = NAMES[Math.floor(r() * NAMES.length)]!;
    const oid = r() < 0.05 ? hex(r, 39) + "G" : r() < 0.05 ? hex(r, 40).toUpperCase() : hex(r, 40);
    const sep = r() < 0.05 ? "\t" : " ";
    const end = r() < 0.2 ? "" : r() < 0.05 ? "\n\n" : "\n";
    parts.push(frame(Buffer.from(`${oid}${sep}${name}${end}`, "latin1")));
  }
  const ending = r();
  if (ending < 0.6) parts.push(Buffer.from("0000"));
  else if (ending < 0.7) parts.push(Buffer.from("0001"));
  else if (ending < 0.75) parts.push(Buffer.from("ERR x"));
  else if (ending < 0.8) parts.push(frame(Buffer.from("ERR not allowed\n")));
  else if (ending < 0.85) parts.push(Buffer.from("0004"), Buffer.from("0000"));
  else if (ending < 0.9) parts.push(Buffer.from("0003"));
  // else: no flush at all
  if (r() < 0.3) parts.push(Buffer.from("0000"));
  let body = Buffer.concat(parts);
  const damage = r();
  if (damage < 0.1 && body.length > 0) body = body.subarray(0, Math.floor(r() * body.length)); // cut off
  else if (damage < 0.2 && body.length > 0) {
    const at = Math.floor(r() * body.length);
    body = Buffer.from(body);
    body[at] = Math.floor(r() * 256); // one byte changed: a length, a digit, a name
  }
  return body;
}

test("reads every answer as pkt-line by pkt-line reading does", () => {
  const r = rng(48);
  let good = 0;
  let refused = 0;
  for (let n = 0; n < 4000; n++) {
    const body = answer(r);
    const prefixes = r() < 0.5 ? ["refs/handoff/"] : ["refs/handoff/tasks/", "refs/heads/"];
    const from = r() < 0.1 && body.length > 0 ? Math.floor(r() * 8) : 0;
    const want = byPktLines(body, prefixes, from);
    assert.is(readListing(body, prefixes, from), want, `answer ${JSON.stringify(body.toString("latin1"))} from ${from}, prefixes ${prefixes}`);
    if (want === null) refused++;
    else good++;
  }
  // Both kinds are read many times: the comparison is not between two nulls only.
  assert.ok(good > 400 && refused > 1000, `good ${good}, refused ${refused}`);
});

test("a listing of many refs reads whole, in order, tabs for spaces", () => {
  const lines: Buffer[] = [];
  let want = "";
  for (let i = 0; i < 1000; i++) {
    const oid = (i * 7919).toString(16).padStart(40, "a");
    lines.push(frame(Buffer.from(`${oid} refs/handoff/tasks/live-${i}\n`)));
    want += `${oid}\trefs/handoff/tasks/live-${i}\n`;
  }
  const body = Buffer.concat([...lines, Buffer.from("0000")]);
  assert.is(readListing(body, ["refs/handoff/"]), want);
  assert.is(readListing(body, ["refs/handoff/agents/"]), null, "a ref outside what was asked");
  assert.is(readListing(Buffer.from("0000"), ["refs/handoff/"]), "", "an empty listing");
});

test.run();
