// The text view's file (.git/handoff/view-listing.json) holds, before the open tasks' records, the
// columns the walks over every task read (src/store/view-columns.ts): the bounded text reads those
// and parses only the records it shows; --all reads every record. A file whose records are not
// where its columns say is read whole, and one of the version before (records only) as no file.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LISTING_AT } from "../src/store/record-cache-listing.ts";
import { cleanupTemp, cli, gitOut } from "./support/repo.ts";
import { fixtureNow, viewsRepo, type ViewsFixture } from "./support/views-fixture.ts";

test.after(cleanupTemp);

const F: ViewsFixture = { tasks: LISTING_AT + 60, agents: 12, events: 2 * (LISTING_AT + 60), branches: 4 };

function busy() {
  const repo = viewsRepo(F);
  const status = (...args: string[]) => {
    const r = cli(["status", "--no-conflicts", ...args], { cwd: repo, agent: "agent-000", env: { HANDOFF_NOW: fixtureNow(F) } });
    assert.is(r.code, 0, r.stderr);
    return r.stdout;
  };
  // The first view packs the task refs (view-packing.ts), which is another key: the second one's file is the one read next.
  status();
  const viewFile = join(repo, ".git/handoff/view-listing.json");
  const read = () => {
    const text = readFileSync(viewFile, "latin1");
    const at = text.indexOf("{");
    return { key: text.slice(0, at), body: JSON.parse(text.slice(at)) };
  };
  const write = (key: string, body: unknown) => writeFileSync(viewFile, key + JSON.stringify(body));
  return { status, read, write };
}

const countsLine = (text: string) => text.split("\n")[2]!;

test("the bounded text reads the columns and the records it shows; --all reads every record", () => {
  const { status, read, write } = busy();
  const text = status();
  const all = status("--all");
  const { key, body } = read();
  assert.ok(body.columns && body.tasks.length === body.columns.ids.length, "the columns describe every record");
  const { columns } = body;
  const code = (s: string) => String.fromCharCode(48 + columns.statuses.indexOf(s));
  // The last task stored as claimed, told by its column to be one to do (the same length: the records stay where they were).
  const last = columns.st.lastIndexOf(code("claimed"));
  assert.ok(last > 20, "a claim past the lines the text shows");
  columns.st = columns.st.slice(0, last) + code("todo") + columns.st.slice(last + 1);
  // And the first row's objective, of the same length, in its record.
  const first = body.tasks[0];
  const objective = first.objective.toUpperCase();
  assert.is.not(objective, first.objective);
  first.objective = objective;
  write(key, body);
  const [todo, claimed] = [/todo (\d+)/, /claimed (\d+)/].map((re) => Number(re.exec(countsLine(text))![1]));
  assert.ok(countsLine(status()).startsWith(`  todo ${todo! + 1}  claimed ${claimed! - 1} `), `the counts come from the columns: ${countsLine(status())}`);
  assert.ok(status().includes(`  ${first.id} `) && status().includes(objective), "the row shown is read from its record");
  // --all parses every record (the columns aside): the claim stands, and the objective is the record's.
  const whole = status("--all");
  assert.is(countsLine(whole), countsLine(all));
  assert.ok(whole.includes(objective));
});

test("records that are not where the columns say: the whole file is read", () => {
  const { status, read, write } = busy();
  status();
  const { key, body } = read();
  body.tasks[0].objective = "by another hand, longer";
  write(key, body);
  assert.match(status(), /by another hand, longer/);
});

test("a file of the version before (records, no columns) reads as none", () => {
  const { status, read, write } = busy();
  const text = status();
  const { key, body } = read();
  body.tasks[0].objective = "from a file of version 5";
  write(key, { version: 5, tasks: body.tasks, counted: body.counted });
  assert.is(status(), text);
  assert.not.match(status("--all"), /from a file of version 5/);
  assert.ok(read().body.columns, "written again, with its columns");
});

test("drift from the columns: each agent's held scopes and first claim's base are its records' own", () => {
  // Every agent on a branch of its own; every fifth one changed src/shared.ts there.
  const G: ViewsFixture = { ...F, branches: F.agents };
  const repo = viewsRepo(G);
  const as = (agent: string, args: string[]) => {
    const r = cli(args, { cwd: repo, agent, env: { HANDOFF_NOW: fixtureNow(G) } });
    assert.is(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  // agent-005 claims a task with its branch checked out: the claim's base is its branch's tip, so
  // nothing it committed counts (the merge base with main would show src/shared.ts).
  const todo = (JSON.parse(as("agent-000", ["task", "list", "--status", "todo", "--json"])) as { id: string }[])[0]!.id;
  gitOut(repo, "checkout", "-q", "agent-005");
  as("agent-005", ["claim", todo, "--over-capacity"]);
  gitOut(repo, "checkout", "-q", "main");
  const status = () => as("agent-000", ["status", "--no-conflicts"]);
  status();
  status();
  rmSync(join(repo, ".git/handoff/view-listing.json"));
  const whole = status();
  const drift = whole.slice(whole.indexOf("\nundeclared"), whole.indexOf("\npossibly stuck"));
  assert.match(drift, /\n {2}agent-010 {2}src\/shared\.ts {2}\(declared src\/agent-010\.ts src\/t-00010\.ts src\/t-00022\.ts /, drift);
  assert.not.match(drift, /agent-005/, "measured from its claim's base");
  assert.is(status(), whole, "the same text from the view file's columns");
});

test.run();
