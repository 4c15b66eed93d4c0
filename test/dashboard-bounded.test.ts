// The dashboard's views stay bounded however many tasks there are: at 10,000 tasks the matrix built
// ~61,000 elements and a long dependency chain's graph was an SVG over a million pixels wide. With
// 400 tasks in one chain: the board 200 cards a column, the matrix 300 rows, the graph its first
// layers, the blocked list 300 rows, each with a line that says how many more there are and where
// to see them; the server sends only those (dashboard-state-bounded.test.ts has the rest).
import type { BrowserContext } from "playwright-core";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { launchBrowser } from "./support/browser.ts";
import { startDashboard } from "./support/dashboard.ts";
import { cleanupTemp, tempRepo } from "./support/repo.ts";
import { seedTasks } from "./bench/task-fixture.ts";

let browser: BrowserContext | undefined;
test.after(async () => {
  await browser?.close();
  cleanupTemp();
});

test("400 tasks in a chain: matrix, graph and blocked list are bounded and say what they leave out", async () => {
  const repo = tempRepo();
  await seedTasks(repo, 400, { scoped: false, chain: true });
  const dash = await startDashboard(repo, [], { HANDOFF_AGENT: "lead" });
  try {
    browser = await launchBrowser();
    const page = await browser.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(dash.link);
    await page.waitForSelector("body[data-rendered]");
    const show = async (view: string) => {
      await page.click(`nav a[data-view=${view}]`);
      await page.waitForSelector(`#view-${view}.active > *`);
    };
    // The server sends the part each view shows, and the totals.
    const state = await page.evaluate(async () => (await fetch("/api/state")).json());
    assert.equal([state.tasks.length, state.totals.tasks, state.status.counts.todo], [200, 400, 400]);
    assert.equal([state.status.blocked.length, state.totals.blocked], [300, 399]);
    assert.equal([state.graph.nodes_total, state.graph.edges_total, state.graph.blocking_total], [400, 399, 399]);
    assert.ok(state.edges.length < 200, `${state.edges.length} edges drawn`);
    await show("board");
    assert.is(await page.locator("[data-column=todo] .card").count(), 200);
    assert.match(await page.locator("[data-column=todo] h3").innerText(), /todo 400$/);
    assert.is(await page.locator("[data-more=column-todo]").innerText(), "+200 more (git handoff task list --status todo)");
    await show("matrix");
    assert.is(await page.locator("table.matrix tbody tr").count(), 300);
    assert.match(await page.locator("[data-more=matrix]").innerText(), /^100 more live tasks are not shown \(git handoff status --all\)$/);
    await show("deps");
    const nodes = await page.locator("svg.graph g.node").count();
    assert.ok(nodes > 0 && nodes <= 200, `${nodes} nodes`);
    assert.ok(Number(await page.locator("svg.graph").getAttribute("width")) < 5000, "the graph is not wider than a few screens");
    assert.match(await page.locator("[data-more=graph]").innerText(), new RegExp(`^${400 - nodes} more tasks of the graph are not drawn`));
    assert.is(await page.locator("table.blocked tbody tr").count(), 300);
    assert.match(await page.locator("[data-more=blocked]").innerText(), /^99 more are not shown/);
    // The whole document stays small.
    assert.ok((await page.evaluate(() => document.getElementsByTagName("*").length)) < 20_000);
  } finally {
    await dash.stop();
  }
});

test.run();
