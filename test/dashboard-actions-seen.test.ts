// The page acts only on what it showed. Reclaim: only the claim it judged stale. The server judged staleness on its last
// snapshot, so a claim that expired (stale on the snapshot) and was taken again before the next
// rebuild was reclaimed although live: the store now refuses a reclaim whose fence is not the
// stored claim's (src/dashboard/actions.ts, reclaimTask's `seen`). In process, with the snapshot
// built before the new claim, so the window the real server has is held open. Accept and reject:
// only the submission it showed, not work handed in again since.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { HandoffError } from "../src/core/errors.ts";
import { runAction } from "../src/dashboard/actions.ts";
import { buildSnapshot } from "../src/dashboard/snapshot.ts";
import { openStore } from "../src/store/store.ts";
import { cleanEnv, cleanupTemp, cli, handoffRefs, tempRepo } from "./support/repo.ts";

test.after(cleanupTemp);

const at = (iso: string) => ({ ...cleanEnv(), HANDOFF_NOW: iso });

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof HandoffError) return `${e.code}: ${e.message}`;
    throw e;
  }
  return "done";
}

test("a claim taken again after the snapshot judged the old one stale is not reclaimed; the stale one still is", async () => {
  const repo = tempRepo();
  const run = (args: string[], agent: string, now: string) => assert.is(cli(args, { cwd: repo, agent, env: at(now) }).code, 0, args.join(" "));
  run(["task", "add", "the work", "--id", "t"], "lead", "2026-01-01T10:00:00Z");
  run(["claim", "t", "--ttl", "1m"], "gina", "2026-01-01T10:00:00Z");
  // 10:05: gina's claim expired; the snapshot says stale.
  const lead = await openStore({ cwd: repo, agent: "lead", env: at("2026-01-01T10:05:00Z") });
  const shown = await buildSnapshot(lead, { merges: new Map(), commits: new Map(), lastSync: null }, false);
  const card = shown.tasks.find((t) => t.id === "t")!;
  assert.equal([card.stale, card.fence], [true, 1]);
  // gina claims it again before the next rebuild: fence 2, live for 30 minutes.
  run(["claim", "t", "--ttl", "30m"], "gina", "2026-01-01T10:05:00Z");
  const before = handoffRefs(repo);
  const lateStore = await openStore({ cwd: repo, agent: "lead", env: at("2026-01-01T10:05:01Z") });
  assert.match(await refusal(runAction(lateStore, { action: "reclaim", task: "t", reason: "looked stale" }, shown)), /^wrong_state: the claim on t is not the one seen: gina holds it with fence 2, the one seen had fence 1/);
  // A page that sends a fence other than the snapshot's is refused before the store.
  assert.match(await refusal(runAction(lateStore, { action: "reclaim", task: "t", reason: "x", fence: 7 }, shown)), /^wrong_state: the claim on t changed since the page showed it/);
  assert.is(handoffRefs(repo), before, "no ref moved");
  assert.is(cli(["task", "show", "t", "--json"], { cwd: repo, env: at("2026-01-01T10:05:02Z") }).json.claim.fence, 2);
  // The same page action on the claim it judged goes through: gina's second claim, expired by
  // 12:00, is reclaimed with the reason logged (after its expiry).
  const later = at("2026-01-01T12:00:00Z");
  const lead2 = await openStore({ cwd: repo, agent: "lead", env: later });
  const again = await buildSnapshot(lead2, { merges: new Map(), commits: new Map(), lastSync: null }, false);
  const c2 = again.tasks.find((t) => t.id === "t")!;
  assert.equal([c2.stale, c2.fence], [true, 2]);
  assert.is(await refusal(runAction(lead2, { action: "reclaim", task: "t", reason: "gina went home", fence: 2 }, again)), "done");
  const shownNow = cli(["task", "show", "t", "--json"], { cwd: repo, env: later }).json;
  assert.equal([shownNow.status, shownNow.claim], ["todo", null]);
  const ev = cli(["events", "--task", "t", "--json"], { cwd: repo, env: later }).json;
  assert.equal(ev.slice(-2).map((e: any) => [e.type, e.holder ?? e.agent, e.fence, e.reason ?? null]), [["expired", "gina", 2, null], ["reclaimed", "gina", 2, "gina went home"]]);
});

test("a review handed in again after the page showed it is not accepted or rejected unseen", async () => {
  const repo = tempRepo();
  const run = (args: string[], agent: string, now: string) => assert.is(cli(args, { cwd: repo, agent, env: at(now) }).code, 0, args.join(" "));
  run(["task", "add", "the work", "--id", "r", "--verify", "true"], "lead", "2026-01-01T10:00:00Z");
  run(["claim", "r"], "gina", "2026-01-01T10:01:00Z");
  run(["done", "r"], "gina", "2026-01-01T10:02:00Z");
  const lead = await openStore({ cwd: repo, agent: "lead", env: at("2026-01-01T10:03:00Z") });
  const shown = await buildSnapshot(lead, { merges: new Map(), commits: new Map(), lastSync: null }, false);
  assert.is(shown.status.review.find((x) => x.task === "r")?.submitted_at, "2026-01-01T10:02:00.000Z");
  // Rejected elsewhere, and gina hands in other work before the page is rebuilt.
  run(["review", "reject", "r", "--reason", "not yet"], "carol", "2026-01-01T10:04:00Z");
  run(["claim", "r"], "gina", "2026-01-01T10:05:00Z");
  run(["done", "r"], "gina", "2026-01-01T10:06:00Z");
  const before = handoffRefs(repo);
  const late = await openStore({ cwd: repo, agent: "lead", env: at("2026-01-01T10:07:00Z") });
  for (const action of ["accept", "reject"]) {
    const body = { action, task: "r", reason: "looked fine" };
    assert.match(await refusal(runAction(late, body, shown)), /^wrong_state: the review of r is not the one seen: gina submitted it again at 2026-01-01T10:06:00\.000Z/, action);
    assert.match(await refusal(runAction(late, { ...body, submitted_at: "2026-01-01T10:02:00.000Z" }, null)), /^wrong_state: the review of r is not the one seen/, `${action}, the page's time`);
  }
  assert.is(handoffRefs(repo), before, "no ref moved");
  // Judged on what it is now, it goes through.
  const now = await buildSnapshot(late, { merges: new Map(), commits: new Map(), lastSync: null }, false);
  assert.is(await refusal(runAction(late, { action: "accept", task: "r" }, now)), "done");
  assert.is(cli(["task", "show", "r", "--json"], { cwd: repo, env: at("2026-01-01T10:08:00Z") }).json.status, "done");
});

test.run();
