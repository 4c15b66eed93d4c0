// The overview's text formats only the lines a bounded view shows (render.ts `rendered`): cut by
// boundSections, it reads exactly as the fully formatted text cut the same way, for sections
// shorter and longer than the cut.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { HeldTask, Overview } from "../src/core/overview.ts";
import { boundSections, SECTION_LINES } from "../src/present/bounded-text.ts";
import { overviewText, unbuiltLines } from "../src/present/render.ts";

const now = new Date("2026-11-30T10:00:00.000Z");
const held = (i: number, inMs: number): HeldTask => ({
  task: `t-${i}`,
  objective: `work ${i}`,
  agent: `agent-${i % 7}`,
  expires_at: new Date(now.getTime() + inMs).toISOString(),
  expires_in_ms: inMs,
  fence: 1,
  worktree: `/w/${i % 7}`,
  branch: i % 2 ? `b${i % 7}` : null,
  scope: "primary",
});

function overview(n: number): Overview {
  const tasks = Array.from({ length: n }, (_, i) => held(i, (i + 1) * 60_000));
  const byAgent = new Map<string, HeldTask[]>();
  for (const t of tasks) byAgent.set(t.agent, [...(byAgent.get(t.agent) ?? []), t]);
  return {
    at: now.toISOString(),
    counts: { todo: 3, claimed: n, done: 1, failed: 0, cancelled: 0, review: 0 },
    holders: [...byAgent].map(([agent, tasks]) => ({ agent, tasks })),
    expiring_soon: tasks.filter((t) => t.expires_in_ms <= 5 * 60_000),
    expired: Array.from({ length: n }, (_, i) => held(n + i, -(i + 1) * 60_000)),
  };
}

for (const n of [0, 3, SECTION_LINES, SECTION_LINES + 1, 500]) {
  test(`${n} held claims: the bounded text is the full text cut`, () => {
    const o = overview(n);
    const bounded = boundSections(overviewText(o, now, SECTION_LINES), "hint");
    assert.is(bounded, boundSections(overviewText(o, now), "hint"));
    if (n > SECTION_LINES) assert.match(bounded, new RegExp(`… ${n - SECTION_LINES} more lines? \\(hint\\)`));
  });
}

/** The overview as buildOverview builds it for a bounded view (`shown`): the first lines of each section, the rest counted. */
function built(o: Overview): Overview {
  let left = SECTION_LINES;
  const holders = o.holders.map((h) => {
    const take = Math.max(0, Math.min(h.tasks.length, left));
    left -= take;
    return { ...h, tasks: h.tasks.slice(0, take) };
  });
  const count = (hs: Overview["holders"]) => hs.reduce((n, h) => n + h.tasks.length, 0);
  const firsts = (ts: HeldTask[]) => ts.slice(0, SECTION_LINES);
  return { ...o, holders, expiring_soon: firsts(o.expiring_soon), expired: firsts(o.expired), hidden: { held: count(o.holders) - count(holders), expiring_soon: o.expiring_soon.length - firsts(o.expiring_soon).length, expired: o.expired.length - firsts(o.expired).length } };
}

for (const n of [0, 3, SECTION_LINES, SECTION_LINES + 1, 500]) {
  test(`${n} held claims, only the shown ones built: the lines not built are counted where the sections are cut`, () => {
    const o = built(overview(n));
    const text = overviewText(o, now, SECTION_LINES);
    assert.ok(text.split("\n").length <= 3 + 3 * (SECTION_LINES + 1), "no line made for a claim not built");
    assert.is(boundSections(text, "hint", SECTION_LINES, unbuiltLines(o)), boundSections(overviewText(overview(n), now), "hint"));
  });
}

test("lines not built are a section's blank lines: shown up to the cut, counted past it", () => {
  for (let limit = 1; limit <= 5; limit++) {
    for (let lines = 0; lines <= 3; lines++) {
      for (let blank = 0; blank <= 6; blank++) {
        const body = Array.from({ length: lines }, (_, i) => `  line ${i}`);
        const whole = ["head", ...body, ...Array(blank).fill(" "), "next", "  after"].join("\n");
        const text = ["head", ...body, "next", "  after"].join("\n");
        assert.is(boundSections(text, "hint", limit, new Map([["head", blank]])), boundSections(whole, "hint", limit), `limit ${limit}, ${lines} lines, ${blank} not built`);
      }
    }
  }
});

test.run();
