// The dashboard end to end in a real browser (Debian's chromium through playwright-core): every
// view shows the fixture repository's state, a claim made from the CLI appears without a reload,
// actions from the page change the tasks and leases, untrusted text stays text.
import { copyFileSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { artifact, launchBrowser } from "./support/browser.ts";
import { startDashboard, type DashboardProcess } from "./support/dashboard.ts";
import { dashboardFixture, EVIL, type DashboardFixture } from "./support/dashboard-fixture.ts";
import { cleanupTemp, cli, cliAsync } from "./support/repo.ts";

const VIEWS = ["agents", "board", "matrix", "deps", "leases", "review", "events", "stats", "sync"];
const ctx: { f?: DashboardFixture; dash?: DashboardProcess; browser?: BrowserContext; page?: Page } = {};
const test = suite("dashboard in a browser");

test.before(async () => {
  ctx.f = await dashboardFixture();
  ctx.dash = await startDashboard(ctx.f.repo, [], { HANDOFF_AGENT: "lead" });
  ctx.browser = await launchBrowser();
  ctx.page = await ctx.browser.newPage();
  ctx.page.setDefaultTimeout(10_000);
});

test.after(async () => {
  await ctx.browser?.close();
  await ctx.dash?.stop();
  cleanupTemp();
});

const page = () => ctx.page!;
const text = async (selector: string) => (await page().locator(selector).allTextContents()).join("\n");
async function show(view: string): Promise<void> {
  await page().click(`nav a[data-view=${view}]`);
  await page().waitForSelector(`#view-${view}.active > *`);
}
const lead = (args: string[]) => cli(args, { cwd: ctx.f!.repo, agent: "lead" });

test("without the one-time link the server answers 403; the link sets the cookie and leaves the address bar", async () => {
  const denied = await page().goto(`${ctx.dash!.origin}/`);
  assert.is(denied!.status(), 403);
  const ok = await page().goto(ctx.dash!.link);
  assert.is(ok!.status(), 200);
  assert.is(page().url(), `${ctx.dash!.origin}/`, "the token is gone from the address");
  await page().waitForSelector("body[data-rendered]");
  const cookies = await ctx.browser!.cookies();
  assert.ok(cookies.some((c) => c.name === "handoff_dashboard" && c.httpOnly && c.sameSite === "Strict"));
  assert.is(await page().evaluate(() => document.cookie), "", "the page cannot read the cookie");
  const again = await page().request.get(ctx.dash!.link, { maxRedirects: 0 });
  assert.is(again.status(), 403, "the link works once");
});

test("each view shows the repository's state", async () => {
  await show("agents");
  const agents = page().locator("table.agents tbody tr");
  assert.equal(await agents.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-agent"))), ["alice", "bob", "carol", "dave"]);
  assert.match(await text("tr[data-agent=dave]"), /disconnected/);
  assert.match(await text("tr[data-agent=bob]"), /api from alice/);
  assert.match(await text("table.placements"), /alice-work/);

  await show("board");
  const column = (st: string) => page().locator(`[data-column=${st}] .card`).evaluateAll((cards) => cards.map((c) => c.getAttribute("data-task")).sort());
  assert.equal(await column("todo"), ["client", "docs", "evil", "migrate"]);
  assert.equal(await column("claimed"), ["api", "night"]);
  assert.equal(await column("review"), ["checks", "lint"]);
  assert.equal(await column("done"), ["schema"]);
  assert.equal(await column("failed"), ["perf"]);
  assert.equal(await column("cancelled"), ["old"]);
  assert.match(await text("[data-task=api] .holder"), /^bob$/);
  assert.match(await text("[data-task=api] .countdown"), /expires in 1h5\dm/);
  assert.match(await text("[data-column=claimed] [data-task=night]"), /stale/);
  assert.match(await text("[data-column=todo] [data-task=client]"), /blocked/);
  assert.not.match(await text("[data-column=todo] [data-task=migrate]"), /blocked/);

  await show("matrix");
  assert.is(await text("table.matrix tr[data-task=api] td[data-agent=bob]"), "holds");
  assert.is(await text("table.matrix tr[data-task=checks] td[data-agent=carol]"), "review");
  assert.is(await text("table.matrix tr[data-task=api] td[data-agent=alice]"), "");

  await show("deps");
  assert.is(await page().locator("path.edge.blocked[data-task=client][data-on=api]").count(), 1);
  assert.is(await page().locator("path.edge:not(.blocked)[data-task=migrate][data-on=schema]").count(), 1);
  assert.match(await text("table.blocked tr[data-task=client]"), /api\s*claimed\s*bob/);

  await show("leases");
  assert.match(await text('tr[data-pattern="src/api/routes.ts"]'), /bob\s*api\s*exclusive/);
  assert.match(await text('tr[data-pattern="docs/schema.md"]'), /task schema is done/);
  assert.is(await page().locator('tr[data-pattern="src/api/routes.ts"] button').count(), 0, "a lease in use offers no force release");

  await show("review");
  assert.match(await text(".review[data-task=checks] pre.verification"), /checking build\s+all 3 tests passed/);
  assert.match(await text(".review[data-task=checks] .diff"), /1 file changed[\s\S]*checks\.txt/);
  assert.match(await text("table.conflicts tr.pair"), /alice-work[\s\S]*bob-work[\s\S]*shared\.txt/);

  await show("events");
  const types = await page().locator("table.events tr[data-type]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-type")));
  for (const t of ["created", "claimed", "handoff", "claim_refused", "submitted", "cancelled"]) assert.ok(types.includes(t), `event ${t} listed`);
  await page().selectOption("select[name=type]", "handoff");
  await page().click("form.filters button[type=submit]");
  await page().waitForFunction(() => document.querySelector("#view-events h2")?.textContent?.startsWith("Events matching"));
  const filtered = await page().locator("table.events tr[data-type]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-type")));
  assert.equal(filtered, ["handoff"]);
  await page().fill("input[name=task]", "perf");
  await page().selectOption("select[name=type]", "");
  await page().click("form.filters button[type=submit]");
  await page().waitForFunction(() => document.querySelector("#view-events h2")?.textContent?.includes("(3)"));
  assert.equal(await page().locator("table.events tr[data-type]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-type")).sort()), ["claimed", "created", "failed"]);

  await show("stats");
  assert.ok((await page().locator(".chart.catches rect.bar").count()) >= 1, "the refused duplicate claim is charted");
  assert.match(await text(".chart.review"), /passed\s*2/);
  assert.match(await text(".chart.handoffs"), /delivered\s*1/);

  await show("sync");
  assert.match(await text("tr.remote"), /origin/);
  assert.match(await text("tr.quarantined"), /refs\/handoff\/tasks\/forged/);
  // What repairs it, as sync and status name it (the whole hint on hover).
  assert.match(await text("tr.quarantined td.repair"), /^git handoff sync --repair( --force)?$/);
  assert.match(await text("tr.quarantined-count"), /1/);
});

test("screenshots of every view", async () => {
  for (const v of VIEWS) {
    await show(v);
    await page().screenshot({ path: artifact(`${v}.png`), fullPage: true });
  }
  if (process.env.HANDOFF_DOCS_SCREENSHOT) {
    mkdirSync(resolve(import.meta.dirname, "../docs"), { recursive: true });
    await show("board");
    await page().screenshot({ path: artifact("readme.png") });
    copyFileSync(artifact("readme.png"), resolve(import.meta.dirname, "../docs/dashboard.png"));
  }
});

test("a record holding <script> and terminal escapes renders as text", async () => {
  await show("board");
  const shown = await text("[data-task=evil] .objective");
  assert.is(shown, EVIL.replace(/\x1b/g, "\\x1b"));
  assert.is(await page().evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
  assert.is(await page().locator("main script").count(), 0);
});

test("a claim made from the CLI appears on the open page within 2 s, without a reload", async () => {
  await show("board");
  await page().evaluate(() => ((window as unknown as { __same: boolean }).__same = true));
  const r = await cliAsync(["claim", "docs"], { cwd: ctx.f!.wt.carol!, agent: "carol" });
  assert.is(r.code, 0, r.stderr);
  const started = Date.now();
  await page().waitForSelector("[data-column=claimed] [data-task=docs]", { timeout: 2000 });
  const ms = Date.now() - started;
  assert.match(await text("[data-column=claimed] [data-task=docs] .holder"), /^carol$/);
  assert.is(await page().evaluate(() => (window as unknown as { __same?: boolean }).__same), true, "same document: no reload");
  console.log(`  claim shown ${ms} ms after the CLI exited`);
});

test("accept and reject from the page change the tasks, logged as the dashboard's agent", async () => {
  await show("review");
  await page().click(".review[data-task=checks] button[data-action=accept]");
  await page().waitForSelector(".review[data-task=checks]", { state: "detached" });
  const accepted = lead(["task", "show", "checks", "--json"]).json;
  assert.is(accepted.status, "done");
  assert.equal([accepted.review.decision.verdict, accepted.review.decision.by], ["accepted", "lead"]);

  // Reject needs a reason: without one the page refuses before asking the server.
  await page().click(".review[data-task=lint] button[data-action=reject]");
  assert.match(await text("#toast"), /reason is required/);
  await page().fill(".review[data-task=lint] input.reason", "fix the <b>lint</b> config");
  await page().click(".review[data-task=lint] button[data-action=reject]");
  await page().waitForSelector(".review[data-task=lint]", { state: "detached" });
  assert.is(lead(["task", "show", "lint", "--json"]).json.status, "todo");
  const events = lead(["events", "--type", "rejected", "--json"]).json;
  assert.equal(events.map((e: { task: string; agent: string; reason: string }) => [e.task, e.agent, e.reason]), [["lint", "lead", "fix the <b>lint</b> config"]]);
});

test("a stale claim is reclaimed and a flagged lease force-released from the page, with a reason", async () => {
  await show("board");
  await page().fill("[data-task=night] input.reason", "dave went home");
  await page().click("[data-task=night] button[data-action=reclaim]");
  await page().waitForSelector("[data-column=todo] [data-task=night]");
  assert.is(lead(["task", "show", "night", "--json"]).json.status, "todo");

  await show("leases");
  await page().fill('tr[data-pattern="docs/schema.md"] input.reason', "schema is done");
  await page().click('tr[data-pattern="docs/schema.md"] button[data-action=unlease]');
  await page().waitForSelector('tr[data-pattern="docs/schema.md"]', { state: "detached" });
  const ev = lead(["events", "--type", "lease_reclaimed", "--json"]).json;
  assert.is(ev.length, 1);
  assert.equal([ev[0].agent, ev[0].holder, ev[0].paths], ["lead", "alice", ["docs/schema.md"]]);
  assert.match(ctx.dash!.stderr(), /lead released docs\/schema\.md of alice/);
});

test.run();
