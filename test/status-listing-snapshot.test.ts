// `status` over many tasks reads the task listing from one file named by the task tips
// (.git/handoff/listing-<digest>.json): the next view over the same tips reads it, a moved task ref
// names another file (the old one is dropped), and a damaged file is only a slower read. The text
// view reads only the open tasks (view-listing.json, keyed by the task refs as packed-refs and the
// loose files hold them) and counts the history. It bounds each agent's held ids and the
// stuck-claims section; --all and --json stay complete. Both files are ASCII (JSON escapes the rest).
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LISTING_AT } from "../src/store/record-cache-listing.ts";
import { cleanupTemp, cli, gitOut } from "./support/repo.ts";
import { fixtureNow, viewsRepo, type ViewsFixture } from "./support/views-fixture.ts";

test.after(cleanupTemp);

/** A listing file: the refs it was read from (its key), then the JSON of what was read. */
function readListing(path: string): { tips: string; body: any } {
  const text = readFileSync(path, "latin1");
  const at = text.indexOf("{");
  return { tips: text.slice(0, at), body: JSON.parse(text.slice(at)) };
}
const writeListing = (path: string, tips: string, body: unknown) => writeFileSync(path, tips + JSON.stringify(body));

const F: ViewsFixture = { tasks: LISTING_AT + 100, agents: 20, events: 10 * (LISTING_AT + 100), branches: 20 };

function busy() {
  const repo = viewsRepo(F);
  const run = (...args: string[]) => {
    const r = cli(args, { cwd: repo, agent: "agent-000", env: { HANDOFF_NOW: fixtureNow(F) } });
    assert.is(r.code, 0, r.stderr);
    return r;
  };
  const listings = () => (existsSync(join(repo, ".git/handoff")) ? readdirSync(join(repo, ".git/handoff")).filter((f) => f.startsWith("listing-") && !f.endsWith(".view.json")) : []);
  const viewFile = join(repo, ".git/handoff/view-listing.json");
  return { repo, run, listings, viewFile };
}

test("a view writes the listing of its tips once; the next view over the same tips reads it", () => {
  const { repo, run, listings } = busy();
  assert.equal(listings(), [], "nothing before the first view");
  const first = run("status", "--no-conflicts", "--json").json;
  const [file] = listings();
  assert.ok(file, "the first view wrote the listing");
  assert.is(first.matrix.total, first.matrix.rows.length, "--json: every matrix row");
  // A poisoned objective proves the second view reads the file, not the records.
  const path = join(repo, ".git/handoff", file!);
  const { tips, body: saved } = readListing(path);
  assert.is(saved.tasks.length, F.tasks);
  const todo = saved.tasks.find((t: { status: string }) => t.status === "todo");
  todo.objective = "from the listing file";
  writeListing(path, tips, saved);
  const second = run("status", "--no-conflicts", "--json").json;
  assert.ok(second.matrix.rows.some((r: { objective: string }) => r.objective === "from the listing file"));
  assert.equal(listings(), [file], "the same tips: the same file, not rewritten");
});

test("a listing file under the right name but of other tips is not used (the name is a quick hash; the tips inside decide)", () => {
  const { repo, run, listings, viewFile } = busy();
  run("status", "--no-conflicts", "--json");
  run("status", "--no-conflicts");
  const [file] = listings();
  const path = join(repo, ".git/handoff", file!);
  const { tips, body: saved } = readListing(path);
  assert.ok(tips.split("\n").length > LISTING_AT, "the file holds the tips it was read from");
  const todo = saved.tasks.find((t: { status: string }) => t.status === "todo");
  todo.objective = "from a listing of other tips";
  // As if another set of tips had hashed to the same name: one commit id differs.
  const other = tips.replace(/ ([0-9a-f]{40})\n/, (_m: string, oid: string) => ` ${oid.split("").reverse().join("")}\n`);
  assert.is.not(other, tips);
  writeListing(path, other, saved);
  const view = readListing(viewFile);
  view.body.tasks.find((t: { status: string }) => t.status === "todo").objective = "from a listing of other tips";
  // The view file's key: the packed task refs' lines, then the loose ones; one commit id differs.
  const otherKey = view.tips.replace(/\n([0-9a-f]{40}) /, (_m: string, oid: string) => `\n${oid.split("").reverse().join("")} `);
  assert.is.not(otherKey, view.tips);
  writeListing(viewFile, otherKey, view.body);
  const again = run("status", "--no-conflicts", "--json").json;
  assert.not.ok(again.matrix.rows.some((r: { objective: string }) => r.objective === "from a listing of other tips"), "read from the records instead");
  assert.not.match(run("status", "--no-conflicts").stdout, /from a listing of other tips/);
});

test("a task ref that moved names another listing; the old one is dropped", () => {
  const { repo, run, listings, viewFile } = busy();
  run("status", "--no-conflicts");
  const [before] = listings();
  const json = run("status", "--no-conflicts", "--json").json;
  const todo = json.matrix.rows.find((r: { status: string }) => r.status === "todo").task;
  const rowOf = (text: string) => text.split("\n").find((l) => l.startsWith(`  ${todo} `)) ?? "";
  assert.match(rowOf(run("status", "--no-conflicts", "--all").stdout), / todo /);
  const key = readListing(viewFile).tips;
  run("claim", todo);
  const after = run("status", "--no-conflicts", "--json").json;
  const row = after.matrix.rows.find((r: { task: string }) => r.task === todo);
  assert.is(row.status, "claimed", "the view shows the claim made since the last listing");
  assert.is(listings().length, 1);
  assert.is.not(listings()[0], before);
  // The text view: the claim's loose ref is part of the view file's key.
  assert.match(rowOf(run("status", "--no-conflicts", "--all").stdout), / claimed /);
  const moved = readListing(viewFile).tips;
  assert.is.not(moved, key);
  assert.ok(moved.endsWith(`refs/handoff/tasks/${todo} ${gitOut(repo, "rev-parse", `refs/handoff/tasks/${todo}`)}\n`), "the loose ref closes the key");
  // Packed again (as git gc leaves them): another key, the same view.
  const text = run("status", "--no-conflicts", "--all").stdout;
  gitOut(repo, "pack-refs", "--all");
  assert.is(run("status", "--no-conflicts", "--all").stdout, text);
  assert.ok(readListing(viewFile).tips.endsWith("\nloose 0\n"), "no loose task ref left in the key");
});

test("an objective beyond ASCII goes through both files as it was written", () => {
  const { run, listings, viewFile } = busy();
  const objective = "naïve “quoted” 東京 😀 end";
  const id = run("task", "add", objective).stdout.trim();
  run("status", "--no-conflicts");
  assert.equal([listings().length, existsSync(viewFile)], [1, true]);
  for (const f of [viewFile, join(dirname(viewFile), listings()[0]!)]) assert.not.match(readFileSync(f, "latin1"), /[^\x00-\x7f]/, `${f} is ASCII`);
  // Read from the files this time (same refs).
  assert.ok(run("status", "--no-conflicts", "--all").stdout.includes(objective), "text, from the view file");
  const shown = run("task", "list", "--json").json;
  const tasks = Array.isArray(shown) ? shown : shown.tasks;
  assert.is(tasks.find((t: { id: string }) => t.id === id).objective, objective);
  assert.ok(run("status", "--no-conflicts", "--json").stdout.includes(JSON.stringify(objective).slice(1, -1)), "--json, from the listing file");
});

test("a damaged listing file is read again from the records", () => {
  const { repo, run, listings } = busy();
  const first = run("status", "--no-conflicts", "--json").json;
  const path = join(repo, ".git/handoff", listings()[0]!);
  // The right tips, then JSON cut short.
  writeFileSync(path, readListing(path).tips + '{"version":3,"tasks":[{"id"');
  const again = run("status", "--no-conflicts", "--json").json;
  assert.equal(again.counts, first.counts);
  assert.is(again.matrix.rows.length, first.matrix.rows.length);
});

test("the text view reads the open tasks from the view file and counts the final ones", () => {
  const { run, viewFile } = busy();
  const json = run("status", "--no-conflicts", "--json").json;
  const text = run("status", "--no-conflicts").stdout;
  const { tips, body: view } = readListing(viewFile);
  assert.ok(json.counts.done > 0, "the fixture has history");
  assert.is(view.tasks.length, F.tasks - json.counts.done - json.counts.failed - json.counts.cancelled, "only the open tasks");
  assert.equal(view.counted, { done: json.counts.done });
  const counts = `todo ${json.counts.todo}  claimed ${json.counts.claimed}  done ${json.counts.done}  failed 0  cancelled 0  review 0`;
  assert.ok(text.includes(counts), `the text counts every task: ${text.split("\n").slice(0, 3).join(" / ")}`);
  // A poisoned open task proves the text view reads the view file; --json still reads every task.
  const todo = view.tasks.find((t: { status: string }) => t.status === "todo");
  todo.objective = "from the view file";
  writeListing(viewFile, tips, view);
  assert.match(run("status", "--no-conflicts", "--all").stdout, /from the view file/);
  assert.not.ok(JSON.stringify(run("status", "--no-conflicts", "--json").json).includes("from the view file"));
});

test("the text view names a few held ids per agent and bounds the stuck claims; --all names them all", () => {
  const { run } = busy();
  const text = run("status", "--no-conflicts").stdout;
  const all = run("status", "--no-conflicts", "--all").stdout;
  const json = run("status", "--no-conflicts", "--json").json;
  const holder = json.roster.agents.find((a: { claimed: string[] }) => a.claimed.length > 8);
  assert.ok(holder, "an agent holds more than 8 tasks");
  const agents = text.slice(text.indexOf("\nagents\n"), text.indexOf("\nclaims "));
  const line = agents.split("\n").find((l) => l.startsWith(`  ${holder.agent} `))!;
  assert.ok(line.includes(`${holder.claimed.slice(0, 8).join(" ")} +${holder.claimed.length - 8} more]`), line);
  assert.ok(all.includes(holder.claimed.join(" ")), "--all: every held id");
  const stuck = json.drift.stuck.length;
  assert.ok(stuck > 20, `claims renewed on branches that stand still: ${stuck}`);
  assert.match(text, new RegExp(`possibly stuck[^\\n]*\\n(  t-[^\\n]*\\n){20}  … ${stuck - 20} more lines \\(git handoff status --all shows everything\\)`));
  for (const s of json.drift.stuck) assert.ok(all.includes(`  ${s.task}  ${s.agent}  `), `--all lists ${s.task}`);
});

test.run();
