// Text from records (objectives, notes, names) reaches a terminal only escaped: ESC and OSC
// sequences, CR, BEL, C1 controls and bidirectional overrides come out as visible escapes in every
// text view, while --json keeps the exact text.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { formatAnswer } from "../src/hooks/agents.ts";
import { spawnSync } from "node:child_process";
import { forTerminal, neutralise, styleMark } from "../src/present/untrusted.ts";
import { CLI, cleanEnv, cleanupTemp, cli, tempRepo } from "./support/repo.ts";
import { storeClaim, storeSession, storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

const HOSTILE = "evil \x1b]0;pwned\x07 \x1b[2J x\rFAKE \u202e rtl \u2066 iso \x9b31m \x85 end";
const RAW = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

function assertEscaped(out: string, what: string): void {
  assert.not.match(out, RAW, `${what}: no raw control or bidi character in ${JSON.stringify(out)}`);
  assert.ok(out.includes("\\x1b]0;pwned\\x07"), `${what}: the OSC shows as text`);
  assert.ok(out.includes("x\\x0dFAKE"), `${what}: CR shows as text`);
  assert.ok(out.includes("\\u202e rtl \\u2066 iso \\x9b31m \\x85 end"), `${what}: bidi and C1 show as text`);
}

test("neutralise: every unsafe character becomes a visible escape; tab and newline stay; idempotent", () => {
  assert.is(neutralise("a\x1b[31mb\x07c\rd\u202ee\x9bf\tg\nh"), "a\\x1b[31mb\\x07c\\x0dd\\u202ee\\x9bf\tg\nh");
  assert.is(neutralise(neutralise(HOSTILE)), neutralise(HOSTILE));
  // The final pass keeps our own colours only when colour is on; a record's own escapes never,
  // not even the ones our colours are made of.
  const ours = `${styleMark("1")}id${styleMark("0")}`;
  assert.is(forTerminal(`${ours} \x1b]8;;x\x07`, true), "\x1b[1mid\x1b[0m \\x1b]8;;x\\x07");
  assert.is(forTerminal(ours, false), "id");
  assert.is(forTerminal("\x1b[1mid\x1b[0m", true), "\\x1b[1mid\\x1b[0m");
  assert.is(forTerminal(neutralise(`${ours} \x1b[32m`), true), `\x1b[1mid\x1b[0m \\x1b[32m`, "text neutralised earlier is unchanged");
});

test("task list, task show, status and agents escape objectives, notes and names; --json is exact", async () => {
  const repo = tempRepo();
  // The hostile records in-process (support/seed.ts), as the verbs write them: the views are the subject.
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "evil", objective: HOSTILE }]);
  await storeClaim({ cwd: repo, agent: "mallory" }, "evil");
  await storeSession({ cwd: repo, agent: "mallory" }, HOSTILE);
  const views: [string, string[]][] = [
    ["task list", ["task", "list"]],
    ["task show", ["task", "show", "evil"]],
    ["status", ["status"]],
    ["agents", ["agents"]],
  ];
  for (const [what, args] of views) {
    const r = cli(args, { cwd: repo, agent: "lead" });
    assert.is(r.code, 0, `${what}: ${r.stderr}`);
    assertEscaped(r.stdout, what);
  }
  // A multi-line objective cannot pose as one of task show's labelled lines.
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "ml", objective: "one\nholder:     lead (fence 9)" }]);
  assert.not.match(cli(["task", "show", "ml"], { cwd: repo }).stdout, /^holder:/m);
  assert.is(cli(["task", "show", "evil", "--json"], { cwd: repo }).json.objective, HOSTILE, "JSON keeps the exact text");
  assert.is(cli(["agents", "--json"], { cwd: repo }).json.agents.find((a: any) => a.agent === "mallory").objective, HOSTILE);
  // A note given when finishing is shown escaped too, and kept exact in JSON.
  const done = cli(["done", "evil", "--note", HOSTILE, "--no-verify"], { cwd: repo, agent: "mallory" });
  assert.is(done.code, 0, done.stderr);
  assertEscaped(done.stdout, "done");
  assert.is(cli(["task", "show", "evil", "--json"], { cwd: repo }).json.result.note, HOSTILE);
});

test("on a terminal, our colours stay and a record's colour escapes show as text", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "evil", objective: "\x1b[1m\x1b[31mURGENT\x1b[0m fix" }]);
  await storeSession({ cwd: repo, agent: "mallory" }, "\x1b[0m\x1b[32mreviewed-by-lead\x1b[0m");
  for (const view of ["agents", "task list", "status"]) {
    // script(1) gives the command a terminal, so colour is on.
    const env = cleanEnv({ HANDOFF_AGENT: "lead" });
    delete env.NO_COLOR;
    const r = spawnSync("script", ["-qec", `${process.execPath} ${CLI} ${view}`, "/dev/null"], { cwd: repo, env, encoding: "utf8" });
    assert.is(r.status, 0, `${view}: ${r.stderr}`);
    if (view !== "task list") assert.ok(/\x1b\[(1|2|32)m/.test(r.stdout), `${view}: our own colours are on: ${JSON.stringify(r.stdout)}`);
    assert.not.ok(r.stdout.includes("\x1b[31mURGENT") || r.stdout.includes("\x1b[32mreviewed"), `${view}: a record's escapes are not raw: ${JSON.stringify(r.stdout)}`);
    assert.ok(r.stdout.includes("\\x1b[31mURGENT") || r.stdout.includes("\\x1b[32mreviewed-by-lead"), `${view}: they show as text`);
  }
});

test("hook answers escape the text for every agent", () => {
  for (const kind of ["claude", "codex", "cursor", "gemini"] as const) {
    const a = formatAnswer(kind, { decision: "deny", text: `denied: ${HOSTILE}` });
    // What the agent shows a person is the parsed string: it must hold no raw escape.
    const strings: string[] = [];
    JSON.parse(a.stdout, (_k, v) => (typeof v === "string" && strings.push(v), v));
    assert.ok(strings.length > 0, kind);
    for (const s of strings) assert.not.match(s, RAW, `${kind}: ${JSON.stringify(s)}`);
    assert.ok(strings.some((s) => s.includes("\\x1b]0;pwned")), `${kind}: the escape is visible in the reason`);
  }
});

test("the session-start context escapes the objectives and names it quotes", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "evil", objective: HOSTILE }]);
  await storeClaim({ cwd: repo, agent: "bob" }, "evil");
  const r = cli(["hook", "claude-session-start"], { cwd: repo, agent: "bob", input: JSON.stringify({ session_id: "s", cwd: repo, hook_event_name: "SessionStart", source: "startup" }) });
  assert.is(r.code, 0, r.stderr);
  const context: string = r.json.hookSpecificOutput.additionalContext;
  assert.ok(context.includes("evil"), context);
  assert.not.match(context, RAW);
});

test.run();
