// A separate store (src/store/separate-store.ts): `git handoff store --separate` moves every
// coordination ref and the objects they reach into .git/handoff-store.git, out of the user's own
// ref namespace, and `--shared` moves them back. Everything reads and writes there afterwards: the
// CLI, sync through a remote (whose URL the repository's config gives, relative ones included),
// the fast shell hook; the repository's own gc cannot take a coordination object away; an older
// git-handoff (which would read an empty set in the repository) fails on its first write; a
// process that opened the repository before the move refuses to go on in the old place, and a
// running MCP server reopens it at its next call.
import { cpSync, existsSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { spawnSync } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { HandoffError } from "../src/core/errors.ts";
import { openStore } from "../src/store/store.ts";
import { addTask } from "../src/store/task-store.ts";
import { placeGuards, sweepOldPlace } from "../src/store/separate-store.ts";
import { cleanEnv, cleanupTemp, cli, cliAsync, gitOut, tempDir, tempRepo, type CliResult } from "./support/repo.ts";
import { FAST_HOOK } from "./support/hook-runner.ts";
import { overStdio } from "./support/mcp.ts";
import { twoClones } from "./support/servers.ts";
import { team } from "./support/team.ts";
import { storeClaim, storeLease, storeTasks } from "./support/seed.ts";

test.after(cleanupTemp);

const STORE = ".git/handoff-store.git";

function ok(r: CliResult, what: string): CliResult {
  assert.is(r.code, 0, `${what}: ${r.stderr}`);
  return r;
}

/** The repository's own refs under the coordination families (the guards left out). */
const ownRefs = (repo: string) => gitOut(repo, "for-each-ref", "--format=%(refname)", "refs/handoff/", "refs/handoff-remotes/", "refs/handoff-local/");
const storeRefs = (repo: string) => gitOut(repo, `--git-dir=${join(repo, STORE)}`, "for-each-ref", "--format=%(objectname) %(refname)");
/** What a reader sees: the tasks with their state and holder, and the leases. */
function state(repo: string): unknown {
  const tasks = ok(cli(["task", "list", "--json"], { cwd: repo, agent: "lead" }), "task list").json.map((t: any) => [t.id, t.status, t.claim?.agent ?? null]);
  const leases = ok(cli(["leases", "--json"], { cwd: repo, agent: "lead" }), "leases").json.map((l: any) => [l.pattern, l.agent]);
  return { tasks, leases };
}

test("store --separate moves every coordination ref and object out of the repository, --shared moves them back", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, ["one", "two", "three"].map((id) => ({ id, objective: `task ${id}` })));
  await storeLease({ cwd: repo, agent: "alice" }, ["docs/**"]);
  await storeClaim({ cwd: repo, agent: "alice" }, "one");
  const before = state(repo);
  const refs = ownRefs(repo).split("\n");
  assert.ok(refs.length >= 4, "tasks and leases are refs here");

  const shown = ok(cli(["store", "--json"], { cwd: repo }), "store").json;
  assert.equal([shown.layout, shown.refs], ["shared", refs.length]);
  const dry = ok(cli(["store", "--separate", "--dry-run", "--json"], { cwd: repo }), "dry run").json;
  assert.equal([dry.dry_run, dry.moved], [true, refs.length]);
  assert.not.ok(existsSync(join(repo, STORE)), "a dry run makes nothing");
  assert.equal(ownRefs(repo).split("\n"), refs);

  const moved = ok(cli(["store", "--separate", "--json"], { cwd: repo }), "separate").json;
  assert.equal([moved.layout, moved.from, moved.moved, moved.already], ["separate", "shared", refs.length, false]);
  assert.is(ownRefs(repo), "", "no coordination ref left among the repository's");
  assert.is(storeRefs(repo).split("\n").length, refs.length);
  // The repository's gc prunes what its refs no longer reach: the store's copies are its own.
  gitOut(repo, "gc", "-q", "--prune=now");
  assert.equal(state(repo), before, "every reader sees the same state");
  assert.is(spawnSync("git", [`--git-dir=${join(repo, STORE)}`, "fsck", "--no-dangling"], { encoding: "utf8" }).status, 0);

  // Writes go to the store.
  ok(cli(["claim", "two"], { cwd: repo, agent: "bob" }), "claim in the store");
  ok(cli(["done", "one"], { cwd: repo, agent: "alice" }), "done in the store");
  assert.is(ownRefs(repo), "");
  assert.match(storeRefs(repo), "refs/handoff/tasks/two");
  const after = state(repo);
  assert.equal(new Map((after as any).tasks.map((t: any) => [t[0], t.slice(1)])), new Map([["one", ["done", null]], ["three", ["todo", null]], ["two", ["claimed", "bob"]]]));

  // An older git-handoff writes among the repository's refs: git refuses it there.
  const old = spawnSync("git", ["update-ref", "refs/handoff/tasks/stray", "HEAD"], { cwd: repo, encoding: "utf8" });
  assert.is.not(old.status, 0, "the guard refs keep refs/handoff/* from being made here");
  assert.match(old.stderr, "'refs/handoff' exists");
  assert.match(gitOut(repo, "cat-file", "-p", "refs/handoff"), "separate store");

  const again = ok(cli(["store", "--separate", "--json"], { cwd: repo }), "again").json;
  assert.equal([again.already, again.moved], [true, 0]);

  const back = ok(cli(["store", "--shared", "--json"], { cwd: repo }), "shared").json;
  assert.equal([back.layout, back.from], ["shared", "separate"]);
  assert.not.ok(existsSync(join(repo, STORE)), "the store is gone");
  assert.not.ok(gitOut(repo, "for-each-ref", "--format=%(refname)", "refs/handoff", "refs/handoff-remotes", "refs/handoff-local").split("\n").some((r) => ["refs/handoff", "refs/handoff-remotes", "refs/handoff-local"].includes(r)), "the guards are gone");
  gitOut(repo, "gc", "-q", "--prune=now");
  assert.equal(state(repo), after, "back among the repository's refs, nothing lost");
  assert.is(ok(cli(["store", "--json"], { cwd: repo }), "store").json.layout, "shared");
});

test("init --separate-store starts a clone with its coordination refs in a separate store", () => {
  const repo = tempRepo();
  const init = ok(cli(["init", "--separate-store", "--no-hooks", "--json"], { cwd: repo, agent: "lead" }), "init").json;
  assert.is(init.store, join(repo, STORE));
  ok(cli(["task", "add", "first", "--id", "first"], { cwd: repo, agent: "lead" }), "add");
  assert.is(ownRefs(repo), "");
  assert.match(storeRefs(repo), "refs/handoff/tasks/first");
  assert.match(ok(cli(["init", "--no-hooks"], { cwd: repo, agent: "lead" }), "again").stdout, "a separate store", "init says where the state is");
});

test("store refuses what it cannot do, and changes nothing", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "t", objective: "a task" }]);
  const refs = ownRefs(repo);
  const both = cli(["store", "--separate", "--shared"], { cwd: repo });
  assert.is(both.code, 2);
  assert.match(both.stderr, "exclude each other");
  const bare = `${tempDir()}/b.git`;
  gitOut(repo, "clone", "-q", "--bare", repo, bare);
  const inBare = cli(["store", "--separate"], { cwd: bare });
  assert.is(inBare.code, 2, inBare.stderr);
  assert.not.ok(existsSync(join(bare, "handoff-store.git")));
  const nowhere = cli(["store"], { cwd: tempDir() });
  assert.is(nowhere.code, 2);
  assert.match(nowhere.stderr, "not a git repository");
  assert.is(ownRefs(repo), refs);
  // A file with the store's name is no store: nothing reads it, and a move replaces it.
  writeFileSync(join(repo, STORE), "not a store\n");
  assert.is(ok(cli(["task", "list", "--json"], { cwd: repo, agent: "lead" }), "list").json.length, 1);
  ok(cli(["store", "--separate"], { cwd: repo }), "separate over the file");
  assert.is(ok(cli(["task", "show", "t", "--json"], { cwd: repo, agent: "lead" }), "show").json.id, "t");
});

test("a separate store removed by hand: reads and writes refuse instead of seeing nothing, doctor says so, store --shared starts over", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "t", objective: "a task" }]);
  ok(cli(["store", "--separate"], { cwd: repo }), "separate");
  rmSync(join(repo, STORE), { recursive: true });
  for (const args of [["task", "list"], ["claim", "t"], ["task", "add", "another"], ["leases"]]) {
    const r = cli(args, { cwd: repo, agent: "lead" });
    assert.is(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, "which is not there");
  }
  assert.is(ownRefs(repo), "", "nothing was written");
  const doctor = cli(["doctor", "--json"], { cwd: repo }).json.checks.find((c: any) => c.name === "store-layout");
  assert.is(doctor.status, "fail");
  assert.match(doctor.fix, "store --shared");
  ok(cli(["store", "--shared"], { cwd: repo }), "start over");
  assert.is(ok(cli(["task", "list", "--json"], { cwd: repo, agent: "lead" }), "list").json.length, 0);
  ok(cli(["task", "add", "again", "--id", "again"], { cwd: repo, agent: "lead" }), "add again");
  assert.match(ownRefs(repo), "refs/handoff/tasks/again");
});

test("a clone with a separate store syncs with clones of either layout, through a relative remote URL", async () => {
  const { bare, a, b } = twoClones();
  // The remote as the repository's config names it, relative to its worktree.
  gitOut(a, "remote", "set-url", "origin", relative(a, bare));
  await storeTasks({ cwd: a, agent: "alice" }, [{ id: "mine", objective: "from a" }]);
  ok(cli(["store", "--separate"], { cwd: a }), "separate");
  const pushed = ok(cli(["sync", "--json"], { cwd: a, agent: "alice" }), "sync a").json;
  assert.equal(pushed.pushed, ["refs/handoff/tasks/mine"]);
  await storeTasks({ cwd: b, agent: "bob", push: true }, [{ id: "theirs", objective: "from b" }]);
  const fetched = ok(cli(["sync", "--json"], { cwd: a, agent: "alice" }), "sync a").json;
  assert.equal(fetched.fetched, ["refs/handoff/tasks/theirs"]);
  assert.is(ownRefs(a), "", "tracking refs went to the store too");
  assert.match(storeRefs(a), "refs/handoff-remotes/origin/tasks/theirs");

  // An exclusive grant through the remote from the store, seen and respected by the other clone.
  ok(cli(["claim", "theirs", "--push"], { cwd: a, agent: "alice" }), "claim from a");
  ok(cli(["sync"], { cwd: b, agent: "bob" }), "sync b");
  const lost = cli(["claim", "theirs", "--push"], { cwd: b, agent: "bob" });
  assert.is(lost.code, 3, lost.stderr);
  assert.match(lost.stderr, "alice");
  ok(cli(["sync"], { cwd: a, agent: "alice" }), "sync a"); // bob's refused claim, on his log
  ok(cli(["sync"], { cwd: a, agent: "alice" }), "sync a"); // nothing: remembered
  const quiet = ok(cli(["sync", "--json"], { cwd: a, agent: "alice" }), "sync a").json;
  assert.equal([quiet.fetched, quiet.pushed, quiet.unchanged], [[], [], true], "then a sync with nothing new goes by what the last one saw");
  assert.is(gitOut(bare, "for-each-ref", "--format=%(refname)", "refs/handoff/tasks/").split("\n").length, 2);
  assert.is(ok(cli(["doctor", "--json"], { cwd: a, agent: "alice" }), "doctor").json.checks.filter((c: any) => c.status === "fail").length, 0);
});

test("a process that opened the repository before a move refuses to write to the old place", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "first", objective: "first" }]);
  const warm = await openStore({ cwd: repo, agent: "lead", env: cleanEnv(), warm: true });
  const oneShot = await openStore({ cwd: repo, agent: "lead", env: cleanEnv() });
  try {
    ok(cli(["store", "--separate"], { cwd: repo }), "separate");
    for (const [store, what] of [[warm, "a running server"], [oneShot, "a one-shot command"]] as const) {
      try {
        await addTask(store, { id: `late-${what.length}`, objective: "written after the move", priority: 0, scope: [], maxAttempts: 3 });
        assert.unreachable(`${what} wrote to the old place`);
      } catch (e) {
        assert.instance(e, HandoffError, String(e));
        assert.is((e as HandoffError).refusal.code, "environment");
        assert.match((e as HandoffError).refusal.message, "run it again");
      }
    }
  } finally {
    warm.close();
    oneShot.close();
  }
  assert.is(ownRefs(repo), "");
  assert.equal(storeRefs(repo).split("\n").map((l) => l.split(" ")[1]).filter((r) => r!.startsWith("refs/handoff/tasks/")), ["refs/handoff/tasks/first"]);
});

test("a running MCP server follows a move at its next call, both ways", async () => {
  const repo = tempRepo();
  const server = await overStdio(repo, { agent: "alice" });
  try {
    await server.ok("create_task", { objective: "before the move", id: "before" });
    ok(cli(["store", "--separate"], { cwd: repo }), "separate");
    await server.ok("claim_task", { id: "before" });
    await server.ok("create_task", { objective: "after the move", id: "after" });
    assert.is(ownRefs(repo), "", "the server wrote to the store");
    assert.match(storeRefs(repo), "refs/handoff/tasks/after");
    assert.equal((await server.ok("list_tasks")).tasks.map((t: any) => [t.id, t.status]).sort(), [["after", "todo"], ["before", "claimed"]]);
    ok(cli(["store", "--shared"], { cwd: repo }), "shared");
    await server.ok("complete_task", { id: "before" });
    assert.match(ownRefs(repo), "refs/handoff/tasks/before");
    assert.is(ok(cli(["task", "show", "before", "--json"], { cwd: repo }), "show").json.status, "done");
  } finally {
    await server.close();
  }
});

test("the fast shell hook answers from a separate store without starting Node", async () => {
  const t = team(["alice", "bob"]);
  ok(t.as("lead", ["init", "--agents", "claude"]), "init");
  await storeLease({ cwd: t.wt.alice!, agent: "alice" }, ["docs/guide.md"], { exclusive: true });
  ok(cli(["store", "--separate"], { cwd: t.repo }), "separate");
  const edit = (agent: string) => {
    const dir = t.wt[agent]!;
    const payload = { session_id: `s-${agent}`, hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { file_path: join(dir, "docs/guide.md"), content: "x\n" }, cwd: dir };
    const r = spawnSync(FAST_HOOK, ["claude-pre-tool-use"], { cwd: dir, env: cleanEnv({ HANDOFF_AGENT: agent, HANDOFF_FAST_HOOK_WHY: "1" }), input: JSON.stringify(payload), encoding: "utf8" });
    return { code: r.status, out: r.stdout, why: /full hook: (.*)/.exec(r.stderr)?.[1] ?? "" };
  };
  const first = edit("bob"); // the full hook answers and compiles the cache
  assert.match(first.out, "deny", "the lease held in the store is seen");
  const fast = edit("bob");
  assert.is(fast.why, "", "the cache, keyed by the store's refs, answers");
  assert.is(fast.out, first.out, "the same answer");
  edit("alice");
  const own = edit("alice");
  assert.is([own.code, own.why, own.out].join("|"), "0||", "the holder's own edit passes without Node");
  // The lease moves in the store: the cache no longer holds.
  ok(t.as("alice", ["unlease", "docs/guide.md"]), "unlease");
  const after = edit("bob");
  assert.is.not(after.why, "", "a lease change in the store invalidates the cache");
  assert.not.match(after.out, "deny");
});

test("store --separate again tidies what an interrupted move or an older git-handoff left in the repository", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, ["one", "two", "three"].map((id) => ({ id, objective: `task ${id}` })));
  const before = Object.fromEntries(ownRefs(repo).split("\n").map((r) => [r, gitOut(repo, "rev-parse", r)]));
  ok(cli(["store", "--separate"], { cwd: repo }), "separate");
  await storeClaim({ cwd: repo, agent: "alice" }, "one");
  await storeClaim({ cwd: repo, agent: "bob" }, "two");
  const tip = (r: string) => storeRefs(repo).split("\n").find((l) => l.endsWith(` ${r}`))!.split(" ")[0]!;
  const [one, two] = [tip("refs/handoff/tasks/one"), tip("refs/handoff/tasks/two")];
  assert.ok(ok(cli(["doctor", "--json"], { cwd: repo }), "doctor").json.checks.some((c: any) => c.name === "store-layout" && c.status === "ok"));

  // As a move killed before its sweep, or an older git-handoff, leaves it: the guards gone, and
  // refs among the repository's own: one older than the store's, one newer, one that diverged.
  for (const g of ["refs/handoff", "refs/handoff-remotes", "refs/handoff-local"]) gitOut(repo, "update-ref", "-d", g);
  const p3 = before["refs/handoff/tasks/three"]!;
  const late = gitOut(repo, "commit-tree", `${p3}^{tree}`, "-p", p3, "-m", "a late write");
  const p2 = before["refs/handoff/tasks/two"]!;
  const diverged = gitOut(repo, "commit-tree", `${p2}^{tree}`, "-p", p2, "-m", "another history");
  gitOut(repo, "update-ref", "refs/handoff/tasks/one", before["refs/handoff/tasks/one"]!);
  gitOut(repo, "update-ref", "refs/handoff/tasks/two", diverged);
  gitOut(repo, "update-ref", "refs/handoff/tasks/three", late);
  const warned = ok(cli(["doctor", "--json"], { cwd: repo }), "doctor").json.checks.find((c: any) => c.name === "store-layout");
  assert.is(warned.status, "warn");
  assert.match(warned.detail, "3 coordination ref(s) left");
  assert.match(warned.detail, "guard refs missing");

  const tidied = ok(cli(["store", "--separate", "--json"], { cwd: repo }), "tidy").json;
  assert.equal([tidied.already, tidied.moved, tidied.conflicts], [true, 1, ["refs/handoff/tasks/two"]]);
  assert.is(tip("refs/handoff/tasks/one"), one, "an older leftover is dropped");
  assert.is(tip("refs/handoff/tasks/two"), two, "a diverged one keeps the store's");
  assert.is(tip("refs/handoff/tasks/three"), late, "a newer one is carried over");
  assert.is(ownRefs(repo), "");
  assert.is(ok(cli(["doctor", "--json"], { cwd: repo }), "doctor").json.checks.find((c: any) => c.name === "store-layout").status, "ok");
  gitOut(repo, "gc", "-q", "--prune=now");
  assert.is(spawnSync("git", [`--git-dir=${join(repo, STORE)}`, "fsck", "--no-dangling"], { encoding: "utf8" }).status, 0, "what was carried over is the store's own");
});

test("a ref written under a family just before its guard is a lost race the sweep goes round for, not corrupt state", async () => {
  // A writer that opened the repository before the switch writes refs/handoff/tasks/x between the
  // sweep's emptying of the old place and the guards: git then refuses the guard refs/handoff as a
  // ref in the way, which failed the move as corrupt state (the race test below, once in a clean-clone run).
  const repo = tempRepo();
  const zero = "0".repeat(40);
  gitOut(repo, "update-ref", "refs/handoff/tasks/x", gitOut(repo, "rev-parse", "HEAD"));
  assert.is(await placeGuards(repo, join(repo, STORE), zero), false, "a lost race: the sweep's next round carries the ref over");
  assert.is(gitOut(repo, "for-each-ref", "--format=%(refname)", "refs/handoff", "refs/handoff-remotes", "refs/handoff-local"), "refs/handoff/tasks/x", "no guard placed, the ref kept");
  // With nothing in the way, the guards are placed.
  gitOut(repo, "update-ref", "-d", "refs/handoff/tasks/x");
  assert.is(await placeGuards(repo, join(repo, STORE), zero), true);
  assert.is(gitOut(repo, "for-each-ref", "--format=%(refname)", "refs/handoff", "refs/handoff-remotes", "refs/handoff-local"), "refs/handoff\nrefs/handoff-local\nrefs/handoff-remotes");
});

test("writers racing a move both ways: every write that was acknowledged is in the place the move left", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "seed", objective: "seed" }]);
  const acknowledged: string[] = [];
  let stop = false;
  // Each writer's writes started and finished (acknowledged or refused), to wait on instead of a time.
  const started = [0, 0, 0];
  const finished = [0, 0, 0];
  const writer = async (w: number) => {
    for (let i = 0; !stop; i++) {
      const id = `w${w}-${i}`;
      started[w] = started[w]! + 1;
      const r = await cliAsync(["task", "add", `written by ${w}`, "--id", id], { cwd: repo, agent: `writer-${w}` });
      finished[w] = finished[w]! + 1;
      if (r.code === 0) acknowledged.push(id);
      else assert.match(r.stderr, /run it again|refs\/handoff/, `writer ${w}: ${r.stderr}`);
    }
  };
  /** Until every writer has finished a write it started after this call. */
  const eachWritesAgain = async () => {
    const next = [...started];
    while (finished.some((n, w) => n <= next[w]!)) await new Promise((r) => setTimeout(r, 10));
  };
  const writers = [0, 1, 2].map(writer);
  while (finished.some((n) => n < 1)) await new Promise((r) => setTimeout(r, 10)); // all three writing when the move starts
  const there = await cliAsync(["store", "--separate", "--json"], { cwd: repo });
  assert.is(there.code, 0, there.stderr);
  await eachWritesAgain();
  const back = await cliAsync(["store", "--shared", "--json"], { cwd: repo });
  assert.is(back.code, 0, back.stderr);
  await eachWritesAgain();
  stop = true;
  await Promise.all(writers);
  assert.ok(acknowledged.length >= 6, `the writers wrote (${acknowledged.length})`);
  const tasks = new Set(ok(cli(["task", "list", "--json"], { cwd: repo, agent: "lead" }), "list").json.map((t: any) => t.id));
  for (const id of acknowledged) assert.ok(tasks.has(id), `${id} was acknowledged and is there`);
  assert.ok(tasks.has("seed"));
  // A writer that opened before the last move may have made folders there before it was refused.
  assert.not.ok(existsSync(join(repo, STORE, "HEAD")));
  assert.is(ok(cli(["store", "--json"], { cwd: repo }), "store").json.layout, "shared");
});

test("the sweep after a switch carries over what the old place gained, changed and lost since the copy, and keeps the new place's own changes", async () => {
  const repo = tempRepo();
  ok(cli(["store", "--separate"], { cwd: repo }), "an empty store");
  for (const g of ["refs/handoff", "refs/handoff-remotes", "refs/handoff-local"]) gitOut(repo, "update-ref", "-d", g);
  const store = join(repo, STORE);
  const tree = gitOut(repo, "rev-parse", "HEAD^{tree}");
  const commit = (label: string) => gitOut(repo, "commit-tree", tree, "-m", label);
  const [A1, A2, B1, C1, D1, E1, X1, X2, X3] = ["A1", "A2", "B1", "C1", "D1", "E1", "X1", "X2", "X3"].map(commit);
  const t = (id: string) => `refs/handoff/tasks/${id}`;
  const inStore = (ref: string, oid: string) => gitOut(repo, `--git-dir=${store}`, "update-ref", ref, oid);
  // What the move copied, as the new place holds it (x and e then changed there on their own).
  const copied = new Map([[t("a"), A1!], [t("b"), B1!], [t("c"), C1!], [t("x"), X1!]]);
  for (const [ref, oid] of copied) inStore(ref, oid);
  inStore(t("x"), X3!);
  inStore(t("e"), E1!);
  // The old place since the copy: a moved, b removed, c as it was, d new, x moved too.
  for (const [ref, oid] of [[t("a"), A2!], [t("c"), C1!], [t("d"), D1!], [t("x"), X2!]]) gitOut(repo, "update-ref", ref!, oid!);
  const zero = "0".repeat(40);
  // The guards fail once (a ref made under a family meanwhile): the next round finds nothing more to do.
  let guardCalls = 0;
  const r = await sweepOldPlace(repo, store, `${store}/objects`, copied, zero, async () => ++guardCalls > 1);
  assert.is(guardCalls, 2);
  assert.equal(r.conflicts, [t("x")]);
  assert.is(r.late, 1);
  assert.is(ownRefs(repo), "", "the old place is empty");
  const now = Object.fromEntries(storeRefs(repo).split("\n").map((l) => l.split(" ").reverse()));
  assert.equal(now, { [t("a")]: A2, [t("c")]: C1, [t("d")]: D1, [t("e")]: E1, [t("x")]: X3 });
});

test("a move back stopped after its switch: doctor says so, store --shared carries over what is newer in the old store and removes it", async () => {
  const repo = tempRepo();
  await storeTasks({ cwd: repo, agent: "lead" }, ["one", "two"].map((id) => ({ id, objective: `task ${id}` })));
  ok(cli(["store", "--separate"], { cwd: repo }), "separate");
  ok(cli(["store", "--shared"], { cwd: repo }), "shared");
  // As a move back killed between its rename and its sweep leaves it: an old store holding a write
  // made during the move (task one claimed there), its refs otherwise as copied.
  ok(cli(["store", "--separate"], { cwd: repo }), "separate again");
  await storeClaim({ cwd: repo, agent: "alice" }, "one");
  const claimed = storeRefs(repo).split("\n").find((l) => l.endsWith(" refs/handoff/tasks/one"))!.split(" ")[0]!;
  const before = storeRefs(repo).split("\n").find((l) => l.endsWith(" refs/handoff/tasks/two"))!.split(" ")[0]!;
  const old = `${join(repo, STORE)}.old-4242`;
  cpSync(join(repo, STORE), old, { recursive: true });
  gitOut(repo, `--git-dir=${old}`, "update-ref", "-d", "refs/handoff/tasks/two"); // removed there: nothing to carry
  ok(cli(["store", "--shared"], { cwd: repo }), "shared");
  gitOut(repo, "update-ref", "refs/handoff/tasks/one", gitOut(repo, "rev-parse", "refs/handoff/tasks/one^")); // the write the sweep never saw
  const warned = ok(cli(["doctor", "--json"], { cwd: repo }), "doctor").json.checks.find((c: any) => c.name === "store-layout");
  assert.is(warned.status, "warn");
  assert.match(warned.detail, "old-4242");
  const tidied = ok(cli(["store", "--shared", "--json"], { cwd: repo }), "tidy").json;
  assert.equal([tidied.already, tidied.moved, tidied.conflicts], [true, 1, []]);
  assert.is(gitOut(repo, "rev-parse", "refs/handoff/tasks/one"), claimed, "the newer write is carried over");
  assert.is(gitOut(repo, "rev-parse", "refs/handoff/tasks/two"), before, "a ref the old store lacks stays as it is");
  assert.not.ok(existsSync(old), "the old store is removed");
  assert.is(ok(cli(["doctor", "--json"], { cwd: repo }), "doctor").json.checks.find((c: any) => c.name === "store-layout").status, "ok");
});

test("a sha256 repository's separate store is sha256 too", async () => {
  const repo = tempDir();
  gitOut(repo, "init", "-q", "--object-format=sha256", "-b", "main");
  gitOut(repo, "commit", "-q", "--allow-empty", "-m", "initial");
  await storeTasks({ cwd: repo, agent: "lead" }, [{ id: "t", objective: "a task" }]);
  ok(cli(["store", "--separate"], { cwd: repo }), "separate");
  assert.match(gitOut(repo, `--git-dir=${join(repo, STORE)}`, "rev-parse", "--show-object-format"), "sha256");
  ok(cli(["claim", "t"], { cwd: repo, agent: "lead" }), "claim");
  assert.is(ok(cli(["task", "show", "t", "--json"], { cwd: repo, agent: "lead" }), "show").json.status, "claimed");
  assert.is(storeRefs(repo).split("\n")[0]!.split(" ")[0]!.length, 64);
});

test.run();
