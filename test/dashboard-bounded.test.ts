// The dashboard's views stay bounded however many tasks there are: at 10,000 tasks the matrix built
// ~61,000 elements and a long dependency chain's graph was an SVG over a million pixels wide. With
// 400 tasks in one chain: the matrix shows 300 rows, the graph its first layers, the blocked list
// 300 rows, each with a line that says how many more there are and where to see them.
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
